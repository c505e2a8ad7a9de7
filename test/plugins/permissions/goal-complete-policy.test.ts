import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness, goalsPlugin, permissionsPlugin, setGoal } from '../../../src/index.ts';
import { ScriptedProvider } from '../../../src/testing/index.ts';

describe('goal_complete under the ask policy', () => {
  it('runs without an approver: it changes only the harness goal state', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'rein-goal-policy-'));
    const model = new ScriptedProvider({
      responses: [
        {
          text: 'Done.',
          toolCalls: [{ id: 'g1', name: 'goal_complete', arguments: { evidence: 'tests pass' } }],
        },
      ],
    });
    const harness = createHarness({
      providers: [model],
      plugins: [goalsPlugin(), permissionsPlugin({ mode: 'ask', workspace })],
    });
    const agent = await harness.createAgent({ provider: 'scripted', model: 'm', cwd: workspace });
    setGoal(agent, 'make the tests pass');
    await agent.whenIdle();
    const types = agent.session.events.map((event) => event.type);
    expect(types).not.toContain('tool/approval-requested');
    expect(types).toContain('goal/completed');
    const result = agent.session.events.find((event) => event.type === 'tool/result')!.data as {
      error?: unknown;
    };
    expect(result.error).toBeUndefined();
  });
});
