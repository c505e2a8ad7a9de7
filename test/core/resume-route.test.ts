import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DiskSessionStore, ScriptedProvider, createHarness } from '../../src/internal.ts';

let root: string | undefined;
afterEach(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describe('resuming a session: the route it goes on with', () => {
  it('a log that never reached a request takes the default route; one that did keeps its own', async () => {
    root = mkdtempSync(join(tmpdir(), 'rein-resume-route-'));
    const store = new DiskSessionStore({ root });
    const first = new ScriptedProvider({ provider: 'first', responses: [{ text: 'one' }] });
    const second = new ScriptedProvider({
      provider: 'second',
      responses: [{ text: 'two' }, { text: 'three' }],
    });
    // A session whose process died before any request was recorded: only its header is stored.
    const empty = createHarness({
      providers: [first, second],
      store,
      defaultModel: { provider: 'first', model: 'm' },
    });
    const created = await empty.createAgent({ id: 'bare' });
    await empty.dispose();
    expect((await store.read('bare')).events.map((event) => event.type)).not.toContain('request/context');

    const later = createHarness({
      providers: [first, second],
      store,
      defaultModel: { provider: 'second', model: 'm' },
    });
    const resumed = await later.resumeAgent(created.id);
    resumed.followup('hello');
    await resumed.whenIdle();
    expect(second.requests).toHaveLength(1);
    expect(first.requests).toHaveLength(0);
    await later.dispose();

    // Now the log records `second/m`: a harness whose default is `first` still goes on with `second`.
    const again = createHarness({
      providers: [first, second],
      store,
      defaultModel: { provider: 'first', model: 'm' },
    });
    const continued = await again.resumeAgent('bare');
    continued.followup('again');
    await continued.whenIdle();
    expect(second.requests).toHaveLength(2);
    expect(first.requests).toHaveLength(0);
    await again.dispose();
    const contexts = (await store.read('bare')).events.filter((event) => event.type === 'request/context');
    // A request/context is logged when the route changes, so one record covers both turns.
    expect(contexts.map((event) => (event.data as { provider: string }).provider)).toEqual(['second']);
  });
});
