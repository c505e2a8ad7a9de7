import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventsOf } from '../../src/testing/index.ts';
import { fixture } from '../core/support.ts';
import type { Sandbox } from './support.ts';
import { sandbox, toolsOf } from './support.ts';

let box: Sandbox;

beforeEach(() => {
  box = sandbox('rein-codes-');
});
afterEach(() => box.cleanup());

describe('tool failures carry their documented codes', () => {
  it('a bash command too long for the kernel is SPAWN_FAILED (E2BIG), a 1 MB glob pattern INVALID_PATTERN', async () => {
    const tools = toolsOf(box);
    const f = await fixture(
      [
        {
          toolCalls: [
            { id: 'b1', name: 'bash', arguments: { command: `echo ${'x'.repeat(300_000)}` } },
            { id: 'g1', name: 'glob', arguments: { pattern: 'a'.repeat(1_000_000) } },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [tools.bash!, tools.glob!] as never[] },
    );
    f.agent.followup('go');
    await f.agent.whenIdle();
    const results = eventsOf<{
      message: { content: { content: { text: string }[] }[] };
      error?: { name: string; code: string };
    }>(f.agent.session, 'tool/result');
    expect(results.map((result) => result.error)).toEqual([
      { name: 'ToolError', code: 'SPAWN_FAILED' },
      { name: 'ToolError', code: 'INVALID_PATTERN' },
    ]);
    expect(results[0]!.message.content[0]!.content[0]!.text).toMatch(/^Error: could not start .*E2BIG/);
    expect(results[1]!.message.content[0]!.content[0]!.text).toBe(
      'Error: the glob pattern cannot be used: Input length: 1000000, exceeds maximum allowed length: 65536',
    );
    expect(eventsOf(f.agent.session, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    await f.harness.dispose();
  });
});
