import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnySessionEvent, SessionHeader, StoredSessionLog } from '../../src/index.ts';
import { DiskSessionStore, createHarness } from '../../src/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import type { ServerFixture } from './support.ts';
import { openStream, serverFixture } from './support.ts';

/** The disk store, counting the log reads (whole, or from the snapshot) the server asks of it. */
class CountingDiskStore extends DiskSessionStore {
  reads = 0;

  override async read(id: string): Promise<{ header: SessionHeader; events: AnySessionEvent[] }> {
    this.reads++;
    return super.read(id);
  }

  override async readLog(id: string): Promise<StoredSessionLog> {
    this.reads++;
    return super.readLog(id);
  }
}

// Opening a stored session in the Web UI is a history request and then a stream from its end: one read
// of the log serves both, and a later open (after the grace period) reads the file again.
describe('a stored session opened by a browser', () => {
  let f: ServerFixture;
  let directory: string;
  afterEach(async () => {
    await f.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('reads the log once for the history and the stream that follows it; again once no browser keeps it', async () => {
    directory = await mkdtemp(join(tmpdir(), 'rein-stored-history-'));
    const writer = createHarness({
      providers: [new ScriptedProvider({ responses: [{ text: ['Hel', 'lo'] }, { text: 'again' }] })],
      store: new DiskSessionStore({ root: directory }),
      defaultModel: { provider: 'scripted', model: 'scripted' },
    });
    const agent = await writer.createAgent();
    const id = agent.id;
    agent.followup('hi');
    await agent.whenIdle();
    await writer.dispose();

    const store = new CountingDiskStore({ root: directory });
    const logged = (await new DiskSessionStore({ root: directory }).read(id)).events;
    f = await serverFixture([], { store, server: { approverGraceMs: 100 } });

    const history = await f.api('GET', `/api/sessions/${id}/events?from=0`);
    expect(history.status).toBe(200);
    expect((history.json as { events: unknown[] }).events).toEqual(logged);
    const stream = await openStream(
      f.server.port,
      `/api/sessions/${id}/stream?from=${logged.length}&batch=1&runs=1&token=${f.server.token}`,
    );
    const hello = await stream.waitFor((frame) => frame.event === 'hello');
    expect(hello.data).toMatchObject({ sessionId: id, live: false, length: logged.length });
    const tail = await f.api('GET', `/api/sessions/${id}/events?from=${logged.length - 2}`);
    expect((tail.json as { events: unknown[] }).events).toEqual(logged.slice(-2));
    expect(store.reads).toBe(1);
    stream.close();

    // Another process continues the session while no browser has it open here.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = createHarness({
      providers: [new ScriptedProvider({ responses: [{ text: 'again' }] })],
      store: new DiskSessionStore({ root: directory }),
      defaultModel: { provider: 'scripted', model: 'scripted' },
    });
    const resumed = await other.resumeAgent(id);
    resumed.followup('once more');
    await resumed.whenIdle();
    await other.dispose();
    const grown = (await new DiskSessionStore({ root: directory }).read(id)).events;
    expect(grown.length).toBeGreaterThan(logged.length);
    const reopened = await f.api('GET', `/api/sessions/${id}/events?from=0`);
    expect((reopened.json as { events: unknown[] }).events).toEqual(grown);
    expect(store.reads).toBe(2);

    // Deleted while its read is kept: the history and the stream are refused, not served from it.
    expect((await f.api('DELETE', `/api/sessions/${id}`)).status).toBe(200);
    const gone = await f.api('GET', `/api/sessions/${id}/events?from=0`);
    expect(gone.status).toBe(404);
    expect(gone.json).toMatchObject({ error: { code: 'SESSION_NOT_FOUND' } });
    const refused = await f.api('GET', `/api/sessions/${id}/stream?from=0`);
    expect(refused.status).toBe(404);
  });
});
