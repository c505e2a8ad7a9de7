import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import { readFileTool } from './support.ts';

// The loop reuses the previous step's system prompt while the sections are unchanged; every change of
// a section's text or order between steps must still reach the next request and the request header.
describe('the system prompt from step to step', () => {
  it('follows a section whose text changes, and is reused while it does not', async () => {
    const call = (id: string) => ({ toolCalls: [{ id, name: 'read_file', arguments: { path: 'a' } }] });
    const model = new ScriptedProvider({ responses: [call('c1'), call('c2'), call('c3'), { text: 'done' }] });
    const harness = createHarness({ providers: [model], tools: [readFileTool()] });
    let note = 'first note';
    harness.prompt.addSection(() => ({ id: 'note', text: note, order: 20 }));
    const agent = await harness.createAgent({ provider: 'scripted', model: 'm', instructions: 'Be brief.' });
    harness.hooks.on('tools/result', () => {
      if (model.requests.length === 2) note = 'second note';
    });
    agent.followup('go');
    await agent.whenIdle();
    const systems = model.requests.map((request) => request.system);
    expect(systems[0]).toMatch(/Be brief\.\n\nfirst note$/);
    expect(systems[1]).toBe(systems[0]);
    expect(systems[2]).toMatch(/Be brief\.\n\nsecond note$/);
    expect(systems[3]).toBe(systems[2]);
    const headers = agent.session
      .eventsOfType('request/header')
      .map((event) => [event.data.reason, event.data.header.system]);
    expect(headers).toEqual([
      ['initial', systems[0]],
      ['change', systems[2]],
    ]);
    await harness.dispose();
  });

  it('follows a section that moves (same text, new order)', async () => {
    const model = new ScriptedProvider({
      responses: [
        { toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a' } }] },
        { text: 'done' },
      ],
    });
    const harness = createHarness({ providers: [model], tools: [readFileTool()] });
    let order = 20;
    harness.prompt.addSection(() => ({ id: 'note', text: 'a note', order }));
    const agent = await harness.createAgent({ provider: 'scripted', model: 'm', instructions: 'Be brief.' });
    harness.hooks.on('tools/result', () => {
      order = 5;
    });
    agent.followup('go');
    await agent.whenIdle();
    const [first, second] = model.requests.map((request) => request.system ?? '');
    expect(first).toMatch(/Be brief\.\n\na note$/);
    expect(second).toMatch(/a note\n\nBe brief\.$/);
    await harness.dispose();
  });
});
