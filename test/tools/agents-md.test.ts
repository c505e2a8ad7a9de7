import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskSessionStore, agentsMdPlugin, builtinTools, createHarness } from '../../src/index.ts';
import { ScriptedProvider, eventTypes, eventsOf } from '../../src/testing/index.ts';
import { encodeSessionSnapshot } from '../../src/session/stores/session-snapshot.ts';
import type { SessionSnapshot } from '../../src/session/stores/session-snapshot.ts';
import type { Sandbox } from './support.ts';
import { sandbox, writeFiles } from './support.ts';

let box: Sandbox;
beforeEach(() => {
  box = sandbox('rein-agents-md-');
  writeFiles(box.workspace, {
    'AGENTS.md': 'Root rules: run npm test before finishing.\n',
    'pkg/AGENTS.md': 'Package rules: no default exports.\n',
    'pkg/sub/AGENTS.md': 'Sub rules: keep functions pure.\n',
    'pkg/sub/file.ts': 'export const x = 1;\n',
    'pkg/other.ts': 'export const y = 2;\n',
  });
});
afterEach(() => box.cleanup());

const read = (id: string, path: string) => ({ id, name: 'read_file', arguments: { path } });

async function agentWith(responses: ConstructorParameters<typeof ScriptedProvider>[0]) {
  const model = new ScriptedProvider(responses);
  const harness = createHarness({
    providers: [model],
    tools: builtinTools({ workspace: box.workspace, reinHome: box.reinHome }),
    plugins: [agentsMdPlugin({ workspace: box.workspace })],
  });
  const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model' });
  return { model, harness, agent };
}

describe('AGENTS.md', () => {
  it('puts the root file in the system prompt and injects a subdirectory’s file once, on first touch', async () => {
    const { model, harness, agent } = await agentWith({
      responses: [
        { toolCalls: [read('r1', 'pkg/sub/file.ts')] },
        { toolCalls: [read('r2', 'pkg/other.ts'), read('r3', 'pkg/sub/missing.ts')] },
        { text: 'done' },
      ],
    });
    agent.followup('look around');
    await agent.whenIdle();
    expect(model.requests[0]!.system).toContain(
      '# Project instructions (AGENTS.md)\n\nRoot rules: run npm test before finishing.',
    );

    // The injected context rides the second request, right after the tool result that triggered it.
    const second = model.requests[1]!.messages;
    expect(second.map((message) => message.source)).toEqual([
      { kind: 'user' },
      { kind: 'model', provider: 'scripted', model: 'test-model' },
      { kind: 'tool', callId: 'r1' },
      { kind: 'inject', origin: 'agents-md:pkg/AGENTS.md' },
      { kind: 'inject', origin: 'agents-md:pkg/sub/AGENTS.md' },
    ]);
    expect(second[3]!.content).toEqual([
      {
        type: 'text',
        text: 'Instructions from pkg/AGENTS.md (they apply to files under pkg/):\n\nPackage rules: no default exports.',
      },
    ]);
    // Later touches of the same directories add nothing, and a failed call touches nothing.
    expect(model.requests[2]!.messages.filter((message) => message.source.kind === 'inject')).toHaveLength(2);
    const types = eventTypes(agent.session, { chunks: false });
    const firstResult = types.indexOf('tool/result');
    expect(types.slice(firstResult, firstResult + 8)).toEqual([
      'tool/result',
      'agent/inbox/spliced',
      'agent/inbox/spliced',
      'step/end',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'user/message',
    ]);
    await harness.dispose();
  });

  it('remembers injections across a resume by reading the log', async () => {
    const first = await agentWith({
      responses: [{ toolCalls: [read('r1', 'pkg/other.ts')] }, { text: 'ok' }],
    });
    first.agent.followup('read');
    await first.agent.whenIdle();
    const injected = eventsOf<{ source: { origin?: string } }>(first.agent.session, 'user/message').filter(
      (message) => message.source.origin !== undefined,
    );
    expect(injected.map((message) => message.source.origin)).toEqual(['agents-md:pkg/AGENTS.md']);
    // A second plugin instance (as after a restart) reads the same log and does not repeat the file.
    const plugin = agentsMdPlugin({ workspace: box.workspace });
    first.harness.use(plugin);
    first.model.push({ toolCalls: [read('r2', 'pkg/other.ts')] }, { text: 'ok' });
    first.agent.followup('again');
    await first.agent.whenIdle();
    const origins = first.model.requests
      .at(-1)!
      .messages.map((message) => (message.source as { origin?: string }).origin)
      .filter((origin) => origin !== undefined);
    expect(origins).toEqual(['agents-md:pkg/AGENTS.md']);
    await first.harness.dispose();
  });
});

describe('AGENTS.md injections in a disk session snapshot', () => {
  const snapshotFile = (): string => join(box.reinHome, 'sessions', '.snapshots', 'docs.json');

  /** Resumes the disk session `docs`, has the model read pkg/other.ts again, and returns the injections. */
  async function resumeAndReadAgain(): Promise<{ deferred: number; origins: string[] }> {
    const model = new ScriptedProvider({
      responses: [{ toolCalls: [read('r2', 'pkg/other.ts')] }, { text: 'ok' }],
    });
    const harness = createHarness({
      providers: [model],
      store: new DiskSessionStore({ root: join(box.reinHome, 'sessions') }),
      tools: builtinTools({ workspace: box.workspace, reinHome: box.reinHome }),
      plugins: [agentsMdPlugin({ workspace: box.workspace })],
    });
    const agent = await harness.resumeAgent('docs', { provider: 'scripted', model: 'test-model' });
    const deferred = agent.session.deferredEvents;
    agent.followup('again');
    await agent.whenIdle();
    const origins = model.requests
      .at(-1)!
      .messages.map((message) => (message.source as { origin?: string }).origin)
      .filter((origin) => origin !== undefined);
    await harness.dispose();
    return { deferred, origins };
  }

  it('saves the injected files, and a resume from the snapshot does not repeat them (nor with a state that does not fit)', async () => {
    const model = new ScriptedProvider({
      responses: [{ toolCalls: [read('r1', 'pkg/other.ts')] }, { text: 'ok' }],
    });
    const harness = createHarness({
      providers: [model],
      store: new DiskSessionStore({ root: join(box.reinHome, 'sessions') }),
      tools: builtinTools({ workspace: box.workspace, reinHome: box.reinHome }),
      plugins: [agentsMdPlugin({ workspace: box.workspace })],
    });
    const agent = await harness.createAgent({ id: 'docs', provider: 'scripted', model: 'test-model' });
    agent.followup('read');
    await agent.whenIdle();
    await harness.dispose();
    const saved = (
      JSON.parse(readFileSync(snapshotFile(), 'utf8')) as {
        snapshot: { events: number; scans: Record<string, { events: number; state: unknown }> };
      }
    ).snapshot;
    expect(saved.scans['agents-md/1']).toEqual({
      events: saved.events,
      state: { injected: ['pkg/AGENTS.md'] },
    });
    const resumed = await resumeAndReadAgain();
    expect(resumed.deferred).toBeGreaterThan(0);
    expect(resumed.origins).toEqual(['agents-md:pkg/AGENTS.md']);
    // A state of another shape is ignored: the injections are read from the log again.
    const spoiled = (
      JSON.parse(readFileSync(snapshotFile(), 'utf8')) as {
        snapshot: { scans: Record<string, { events: number; state: unknown }> };
      }
    ).snapshot;
    spoiled.scans['agents-md/1']!.state = { injected: 'pkg/AGENTS.md' };
    // Saved with a fresh check, so that the plugin's own check of its state is what is tested.
    writeFileSync(snapshotFile(), encodeSessionSnapshot(spoiled as unknown as SessionSnapshot));
    const again = await resumeAndReadAgain();
    expect(again.deferred).toBeGreaterThan(0);
    expect(again.origins).toEqual(['agents-md:pkg/AGENTS.md']);
  });
});

describe('todo_write', () => {
  it('records the whole list as a durable todo/write before its result', async () => {
    const { harness, agent } = await agentWith({
      responses: [
        {
          toolCalls: [
            {
              id: 't1',
              name: 'todo_write',
              arguments: {
                todos: [
                  { content: 'Read the code', status: 'completed' },
                  { content: 'Fix the bug', status: 'in_progress' },
                  { content: 'Run the tests', status: 'pending' },
                ],
              },
            },
            {
              id: 't2',
              name: 'todo_write',
              arguments: {
                todos: [
                  { content: 'a', status: 'in_progress' },
                  { content: 'b', status: 'in_progress' },
                ],
              },
            },
          ],
        },
        { text: 'ok' },
      ],
    });
    agent.followup('plan');
    await agent.whenIdle();
    expect(eventsOf(agent.session, 'todo/write')).toEqual([
      {
        todos: [
          { content: 'Read the code', status: 'completed' },
          { content: 'Fix the bug', status: 'in_progress' },
          { content: 'Run the tests', status: 'pending' },
        ],
      },
    ]);
    const types = eventTypes(agent.session, { chunks: false });
    expect(types.slice(types.indexOf('todo/write') - 1, types.indexOf('todo/write') + 2)).toEqual([
      'tool/call',
      'todo/write',
      'tool/result',
    ]);
    const results = eventsOf<{ message: { content: { content: { text: string }[] }[] } }>(
      agent.session,
      'tool/result',
    );
    expect(results.map((result) => result.message.content[0]!.content[0]!.text)).toEqual([
      'Task list updated (1/3 completed):\n[x] Read the code\n[~] Fix the bug\n[ ] Run the tests',
      'Error: 2 items are in_progress; keep at most one in progress at a time',
    ]);
    await harness.dispose();
  });
});
