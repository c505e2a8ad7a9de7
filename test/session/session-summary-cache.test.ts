import { existsSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskSessionStore } from '../../src/session/stores/index.ts';
import {
  decodeSessionSnapshotBytes,
  encodeSessionSnapshotBytes,
} from '../../src/session/stores/session-snapshot.ts';
import { writeTurnThenDie } from '../support/dead-writer.ts';
import { appendTextTurn } from '../support/session-turns.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'rein-summary-cache-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const pricing = (): { input: number; output: number } => ({ input: 3, output: 15 });
const entryOf = (id: string): string => join(root, '.summaries', `${id}.json`);

describe('the disk store listing cache', () => {
  it('lists from the entry a release leaves, priced by the store that lists', async () => {
    const writer = new DiskSessionStore({ root });
    const session = await writer.create({ id: 'cached', cwd: '/w' });
    appendTextTurn(session, 'First question', 'answer');
    appendTextTurn(session, 'Second question', 'answer');
    await writer.release(session);
    expect(existsSync(entryOf('cached'))).toBe(true);

    const fresh = await new DiskSessionStore({ root, pricing }).list();
    // A store that parses the log (no entry) gives the very same row.
    await rm(join(root, '.summaries'), { recursive: true });
    const parsed = await new DiskSessionStore({ root, pricing }).list();
    expect(fresh).toEqual(parsed);
    expect(fresh).toMatchObject([
      { id: 'cached', title: 'First question', turns: 2, events: session.length },
    ]);
    expect(fresh[0]!.cost).toBeGreaterThan(0);
    // The parse left an entry of its own.
    expect(existsSync(entryOf('cached'))).toBe(true);
  });

  it('without an entry, lists from the snapshot and the events after it, as a full parse does', async () => {
    const writer = new DiskSessionStore({ root });
    const session = await writer.create({ id: 'snap', cwd: '/w' });
    appendTextTurn(session, 'First question', 'answer');
    appendTextTurn(session, 'Second question', 'answer');
    await writer.release(session);
    // Another process opens it, writes a third turn and is killed before its release: no entry, and
    // the snapshot covers two turns of three.
    const dead = writeTurnThenDie(root, 'snap', 'text');
    await rm(join(root, '.summaries'), { recursive: true });
    const fromSnapshot = await new DiskSessionStore({ root, pricing }).list();
    await rm(join(root, '.summaries'), { recursive: true });
    const snapshotPath = join(root, '.snapshots', 'snap.json');
    const original = await readFile(snapshotPath);
    await rm(snapshotPath);
    const parsed = await new DiskSessionStore({ root, pricing }).list();
    expect(fromSnapshot).toEqual(parsed);
    expect(parsed).toMatchObject([{ id: 'snap', title: 'First question', turns: 3, events: dead.length }]);
    // The row came from the snapshot's tally: a (re-checked) snapshot saying otherwise shows in it.
    const changed = decodeSessionSnapshotBytes(original, 'snap')!;
    changed.tally.summary.turns = 10;
    await writeFile(snapshotPath, encodeSessionSnapshotBytes(changed));
    await rm(join(root, '.summaries'), { recursive: true });
    expect(await new DiskSessionStore({ root, pricing }).list()).toMatchObject([{ id: 'snap', turns: 11 }]);
  });

  it('ignores an entry once the log changed, and one that is not a valid entry', async () => {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'changing' });
    appendTextTurn(session, 'One', 'answer');
    await store.release(session);
    const before = (await new DiskSessionStore({ root }).list())[0]!;

    // Another writer appends a turn: the file's size and mtime move on, the entry is stale.
    const other = new DiskSessionStore({ root });
    const reopened = await other.open('changing');
    appendTextTurn(reopened, 'Two', 'answer');
    const length = reopened.length;
    await other.release(reopened);
    const stale = await readFile(entryOf('changing'), 'utf8');
    const after = (await new DiskSessionStore({ root }).list())[0]!;
    expect(after).toMatchObject({ turns: before.turns + 1, events: length });

    // A torn write appended by hand (no release to refresh the entry) is seen as well.
    await writeFile(entryOf('changing'), stale);
    await appendFile(join(root, 'changing.jsonl'), '["torn');
    expect((await new DiskSessionStore({ root }).list())[0]).toMatchObject({ events: length });

    for (const garbage of ['', '{"version":1', '{"version":9}', 'null']) {
      await writeFile(entryOf('changing'), garbage);
      expect((await new DiskSessionStore({ root }).list())[0], garbage).toMatchObject({ events: length });
    }
  });

  it('keeps the corrupt marker, and delete drops the entry', async () => {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'gone' });
    appendTextTurn(session, 'One', 'answer');
    appendTextTurn(session, 'Two', 'answer');
    await store.release(session);
    const lines = (await readFile(join(root, 'gone.jsonl'), 'utf8')).split('\n');
    lines[3] = '{"not": json';
    await writeFile(join(root, 'gone.jsonl'), lines.join('\n'));
    const first = await new DiskSessionStore({ root }).list();
    const second = await new DiskSessionStore({ root }).list();
    expect(first).toMatchObject([{ id: 'gone', events: 2, corrupt: { line: 4 } }]);
    expect(second).toEqual(first);
    await store.delete('gone');
    expect(existsSync(entryOf('gone'))).toBe(false);
    expect(await store.list()).toEqual([]);
  });
});
