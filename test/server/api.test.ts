import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Harness, UserMessage } from '../../src/index.ts';
import { DiskSessionStore, MemorySessionStore, compactSession, createHarness } from '../../src/index.ts';
import type { ServerSettings } from '../../src/server/index.ts';
import { settledHistory } from '../../src/server/settled-history.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import type { ServerFixture } from './support.ts';
import { serverFixture, typesOf } from './support.ts';

type Json = Record<string, unknown>;

describe('server JSON API', () => {
  let f: ServerFixture;
  const directories: string[] = [];
  afterEach(async () => {
    await f.close();
    for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
  });

  async function newSession(body: Json = {}): Promise<string> {
    const created = await f.api('POST', '/api/sessions', body);
    expect(created.status).toBe(201);
    return (created.json as { id: string }).id;
  }

  it('lists models with their facts, and sessions with live status; get, fork and delete', async () => {
    f = await serverFixture([{ text: 'one' }]);
    const models = (await f.api('GET', '/api/models')).json as { models: Json[] };
    expect(models.models).toEqual([
      {
        provider: 'scripted',
        model: 'test-model',
        label: 'Scripted test model',
        contextWindow: 64_000,
        pricing: { input: 1, output: 2 },
        images: true,
      },
      { provider: 'scripted', model: 'other-model', label: 'Another scripted model', contextWindow: 32_000 },
    ]);
    const id = await newSession({ cwd: '/tmp' });
    expect((await f.api('POST', '/api/sessions', { cwd: 'relative/dir' })).status).toBe(400);
    expect((await f.api('POST', '/api/sessions', { provider: 'nope', model: 'x' })).json).toMatchObject({
      error: { code: 'NO_ADAPTER' },
    });
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'Hello there' });
    await f.harness.agents.get(id)!.whenIdle();
    const listed = (await f.api('GET', '/api/sessions')).json as { sessions: Json[] };
    expect(listed.sessions).toEqual([
      expect.objectContaining({
        id,
        title: 'Hello there',
        turns: 1,
        live: true,
        status: 'idle',
        cwd: '/tmp',
      }),
    ]);
    const got = (await f.api('GET', `/api/sessions/${id}`)).json as { state: Json };
    expect(got.state).toMatchObject({
      sessionId: id,
      live: true,
      model: { provider: 'scripted', model: 'test-model' },
    });

    const forked = await f.api('POST', `/api/sessions/${id}/fork`, {});
    expect(forked.status).toBe(201);
    const forkId = (forked.json as { id: string }).id;
    const forkEvents = (await f.api('GET', `/api/sessions/${forkId}/events`)).json as {
      events: { type: string }[];
    };
    expect(forkEvents.events.map((event) => event.type)).toContain('turn/end');

    expect((await f.api('DELETE', `/api/sessions/${id}`)).status).toBe(200);
    expect(f.harness.agents.has(id)).toBe(false);
    expect((await f.api('GET', `/api/sessions/${id}`)).status).toBe(404);
    const after = (await f.api('GET', '/api/sessions')).json as { sessions: Json[] };
    expect(after.sessions.map((row) => row.id)).toEqual([forkId]);
  });

  it('send modes and the inbox: inject parks, remove cancels, send-now starts a parked message', async () => {
    f = await serverFixture([{ text: 'answer' }]);
    const id = await newSession();
    const agent = f.harness.agents.get(id)!;
    // inject while idle only parks; removing it cancels it durably.
    const injected = (await f.api('POST', `/api/sessions/${id}/messages`, { text: 'ctx', mode: 'inject' }))
      .json as { message: UserMessage };
    expect(agent.status).toBe('idle');
    expect((await f.api('GET', `/api/sessions/${id}/inbox`)).json).toMatchObject({
      nextStep: [{ id: injected.message.id }],
    });
    expect((await f.api('DELETE', `/api/sessions/${id}/inbox/${injected.message.id}`)).status).toBe(200);
    expect((await f.api('DELETE', `/api/sessions/${id}/inbox/${injected.message.id}`)).status).toBe(404);
    expect(agent.session.eventsOfType('agent/inbox/spliced').at(-1)!.data).toMatchObject({
      outcome: 'canceled',
    });

    // Parked while idle, "send now" starts a turn with the same message id.
    agent.inbox.append('next-turn', {
      id: 'parked-1',
      role: 'user',
      content: [{ type: 'text', text: 'parked' }],
      source: { kind: 'user' },
    });
    expect(agent.status).toBe('idle');
    expect((await f.api('POST', `/api/sessions/${id}/inbox/parked-1/send-now`, {})).status).toBe(200);
    await agent.whenIdle();
    expect(agent.session.eventsOfType('user/message').map((event) => event.data.id)).toEqual(['parked-1']);

    expect((await f.api('POST', `/api/sessions/${id}/messages`, { text: 'x', mode: 'shout' })).status).toBe(
      400,
    );
    expect((await f.api('POST', `/api/sessions/${id}/messages`, { text: '   ' })).status).toBe(400);
  });

  it('switches the model of a live session for its next request', async () => {
    f = await serverFixture([{ text: 'a' }, { text: 'b' }]);
    const id = await newSession();
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'one' });
    await f.harness.agents.get(id)!.whenIdle();
    const switched = await f.api('PUT', `/api/sessions/${id}/model`, {
      provider: 'scripted',
      model: 'other-model',
    });
    expect(switched.json).toMatchObject({ state: { model: { provider: 'scripted', model: 'other-model' } } });
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'two' });
    await f.harness.agents.get(id)!.whenIdle();
    expect(f.model.requests.map((request) => request.model)).toEqual(['test-model', 'other-model']);
    expect((await f.api('PUT', `/api/sessions/${id}/model`, { provider: 'ghost', model: 'x' })).status).toBe(
      400,
    );
  });

  it('an image larger than the session model takes (imageBytes) is 413 IMAGES_TOO_LARGE, nothing queued', async () => {
    f = await serverFixture([{ text: 'fits' }], {
      models: {
        'small-vision': {
          label: 'Small vision',
          contextWindow: 32_000,
          images: true,
          imageBytes: 64,
          imagesPerRequest: 2,
        },
      },
    });
    const id = await newSession({ provider: 'scripted', model: 'small-vision' });
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
    const refused = await f.api('POST', `/api/sessions/${id}/messages`, {
      text: 'look',
      images: [{ mediaType: 'image/png', data: png }],
    });
    expect(refused.status).toBe(413);
    expect(refused.json).toMatchObject({ error: { code: 'IMAGES_TOO_LARGE' } });
    const gif = { mediaType: 'image/gif', data: 'R0lGODlhAQABAAAAACw=' };
    const tooMany = await f.api('POST', `/api/sessions/${id}/messages`, {
      text: 'look',
      images: [gif, gif, gif],
    });
    expect(tooMany.status).toBe(413);
    expect(tooMany.json).toMatchObject({
      error: {
        code: 'IMAGES_TOO_LARGE',
        message: expect.stringContaining('takes at most 2 images in one request'),
      },
    });
    expect(f.harness.agents.get(id)?.session.eventsOfType('user/message') ?? []).toEqual([]);
    const accepted = await f.api('POST', `/api/sessions/${id}/messages`, {
      text: 'look',
      images: [{ mediaType: 'image/gif', data: 'R0lGODlhAQABAAAAACw=' }],
    });
    expect(accepted.status).toBe(202);
    await f.harness.agents.get(id)!.whenIdle();
    expect(f.model.requests).toHaveLength(1);
  });

  it('settings: read-only help without a config seam; with one, a key is stored and never echoed', async () => {
    f = await serverFixture([]);
    const readOnly = (await f.api('GET', '/api/settings')).json as Json;
    expect(readOnly).toMatchObject({ editable: false, help: expect.stringContaining('key') });
    expect((await f.api('PUT', '/api/settings/keys/deepseek', { key: 'sk-secret-1234' })).status).toBe(501);
    await f.close();

    const stored = new Map<string, string>();
    const settings: ServerSettings = {
      describe: () => ({
        providers: [...stored].map(([provider, key]) => ({
          provider,
          configured: true,
          hint: key.slice(-4),
        })),
      }),
      setProviderKey: (provider, key) => {
        stored.set(provider, key);
      },
    };
    f = await serverFixture([], { server: { settings } });
    const saved = await f.api('PUT', '/api/settings/keys/deepseek', { key: 'sk-secret-1234' });
    expect(saved.status).toBe(200);
    expect(stored.get('deepseek')).toBe('sk-secret-1234');
    expect(saved.text).not.toContain('sk-secret');
    expect(saved.json).toMatchObject({
      editable: true,
      providers: [{ provider: 'deepseek', configured: true, hint: '1234' }],
    });
    expect((await f.api('GET', '/api/settings')).text).not.toContain('sk-secret');
    expect((await f.api('PUT', '/api/settings/keys/deepseek', { key: '' })).status).toBe(400);
  });

  it('manual compaction runs through the compaction module while idle; refused while running or when absent', async () => {
    f = await serverFixture([{ text: 'short answer' }]);
    const id = await newSession();
    expect((await f.api('POST', `/api/sessions/${id}/compact`, {})).json).toMatchObject({
      error: { code: 'COMPACTION_UNAVAILABLE' },
    });
    await f.close();

    let host: Harness | undefined;
    f = await serverFixture([{ text: 'short answer' }, { text: 'slow', hang: true }], {
      server: { compact: (agent) => compactSession(host!, agent) },
    });
    host = f.harness;
    const id2 = await newSession();
    await f.api('POST', `/api/sessions/${id2}/messages`, { text: 'hello' });
    const agent = f.harness.agents.get(id2)!;
    await agent.whenIdle();
    const idle = await f.api('POST', `/api/sessions/${id2}/compact`, {});
    expect(idle.status).toBe(200);
    expect(idle.json).toMatchObject({ result: { compacted: false, reason: 'nothing-to-compact' } });
    await f.api('POST', `/api/sessions/${id2}/messages`, { text: 'again' });
    const busy = await f.api('POST', `/api/sessions/${id2}/compact`, {});
    expect(busy.status).toBe(409);
    expect(busy.json).toMatchObject({ error: { code: 'AGENT_BUSY' } });
    agent.cancel({ kind: 'user' });
    await agent.whenIdle();
  });

  it('a session whose agent the embedding code disposes stays readable from the log it ran', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'rein-disposed-'));
    directories.push(directory);
    f = await serverFixture([{ text: 'one' }, { text: 'two' }], {
      store: new DiskSessionStore({ root: directory }),
    });
    const id = await newSession();
    for (const text of ['first', 'second']) {
      await f.api('POST', `/api/sessions/${id}/messages`, { text });
      await f.harness.agents.get(id)!.whenIdle();
    }
    const agent = f.harness.agents.get(id)!;
    const logged = [...agent.session.events];
    await agent.dispose();
    expect(f.harness.agents.has(id)).toBe(false);
    // The store is gone too: only the log the hub kept from the agent can answer.
    await rm(directory, { recursive: true, force: true });
    const page = (await f.api('GET', `/api/sessions/${id}/events?tail=4`)).json as {
      events: unknown[];
      start: number;
      end: number;
    };
    expect(page.end).toBe(logged.length);
    expect(page.events).toEqual(settledHistory(logged.slice(page.start)));
    const earlier = (await f.api('GET', `/api/sessions/${id}/events?tail=4&before=${page.start}`)).json as {
      events: unknown[];
      start: number;
    };
    expect(earlier.start).toBe(0);
    expect(earlier.events).toEqual(settledHistory(logged.slice(0, page.start)));
  });

  it('a message is in the session file before its send is acknowledged, while the model is still answering', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'rein-ack-'));
    directories.push(directory);
    // A long batch window: only a checkpoint can have written anything; the model answers slowly.
    const store = new DiskSessionStore({ root: directory, batchWindowMs: 60_000 });
    f = await serverFixture([{ text: ['slow ', 'answer'], delayMs: 2_000 }], { store });
    const id = await newSession();
    const answer = await f.api('POST', `/api/sessions/${id}/messages`, { text: 'keep this' });
    expect(answer.status).toBe(202);
    const messageId = (answer.json as { message: { id: string } }).message.id;
    // Another reader (as another process would) finds the message on disk at the acknowledgement.
    const stored = await new DiskSessionStore({ root: directory }).read(id);
    const queued = stored.events.filter(
      (event) =>
        event.type === 'agent/inbox/spliced' &&
        JSON.stringify(event.data).includes(`"id":"${messageId}"`) &&
        JSON.stringify(event.data).includes('keep this'),
    );
    expect(queued).toHaveLength(1);
    expect(f.harness.agents.get(id)!.status).toBe('running');
    await f.api('POST', `/api/sessions/${id}/cancel`, {});
    await f.harness.agents.get(id)!.whenIdle();
  });

  it('a send to a session held by another process answers 409 SESSION_LOCKED with a clear message; nothing changes', async () => {
    const store = new MemorySessionStore();
    f = await serverFixture([{ text: 'hi' }], { store });
    const id = await newSession();
    // Close it here, then let "another process" (a second harness on the same store) hold it.
    await f.harness.agents.get(id)!.dispose();
    const other = createHarness({ providers: [new ScriptedProvider()], store });
    const holder = await other.resumeAgent(id);
    const before = holder.session.length;
    const answer = await f.api('POST', `/api/sessions/${id}/messages`, { text: 'hello?' });
    expect(answer.status).toBe(409);
    expect(answer.json).toMatchObject({
      error: { code: 'SESSION_LOCKED', message: expect.stringContaining('held by another Rein process') },
    });
    expect(holder.session.length).toBe(before);
    expect(typesOf(holder)).not.toContain('user/message');
    await other.dispose();
  });

  it('a server bound to one workspace refuses sessions working elsewhere with WORKSPACE_MISMATCH; they stay readable', async () => {
    const workspace = '/srv/project-a';
    f = await serverFixture([{ text: 'hi' }], { server: { workspace, cwd: workspace } });
    const elsewhere = await f.api('POST', '/api/sessions', { cwd: '/srv/project-b' });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.json).toMatchObject({
      error: {
        code: 'WORKSPACE_MISMATCH',
        message: expect.stringContaining('start `rein web --cwd /srv/project-b` to continue it there'),
      },
    });
    expect(f.harness.agents.list()).toEqual([]);
    expect((await f.api('POST', '/api/sessions', { cwd: '/srv/project-a/' })).status).toBe(201);

    // A stored session from another directory: readable, but not resumed or sent to here.
    const stored = await f.harness.createAgent({ cwd: '/srv/project-b' });
    const id = stored.id;
    await stored.dispose();
    const length = (await f.harness.store.read(id)).events.length;
    for (const [method, path, body] of [
      ['POST', `/api/sessions/${id}/messages`, { text: 'hello?' }],
      ['POST', `/api/sessions/${id}/resume`, {}],
    ] as const) {
      const answer = await f.api(method, path, body);
      expect(answer.status, path).toBe(409);
      expect(answer.json).toMatchObject({ error: { code: 'WORKSPACE_MISMATCH' } });
    }
    expect(f.harness.agents.get(id)).toBeUndefined();
    expect((await f.harness.store.read(id)).events.length).toBe(length);
    expect((await f.api('GET', `/api/sessions/${id}/events`)).status).toBe(200);
    // Never opened here: the session can be opened for writing elsewhere.
    const reopened = await f.harness.resumeAgent(id);
    await reopened.dispose();
  });
});
