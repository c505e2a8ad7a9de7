import type { Agent, Tool } from '../../src/index.ts';
import { defineTool } from '../../src/index.ts';
import type { ScriptedResponse } from '../../src/testing/index.ts';

/** A read-only `list_files` tool that answers two paths under the directory it is given. */
export function listFilesTool(options: { concurrencySafe?: boolean } = {}): Tool<never> {
  return defineTool<{ dir: string }>({
    name: 'list_files',
    description: 'List a directory',
    effect: 'read',
    parameters: {
      type: 'object',
      properties: { dir: { type: 'string' } },
      required: ['dir'],
      additionalProperties: false,
    },
    ...(options.concurrencySafe === true ? { isConcurrencySafe: () => true } : {}),
    execute: (args) => `${args.dir}/a.ts\n${args.dir}/b.ts`,
  }) as Tool<never>;
}

/**
 * The scripted model's reply number `index` in a session of turns of `stepsPerTurn` `list_files` steps
 * each, closed by a one-line summary ("Summary of part N.").
 */
export function toolTurnReply(index: number, stepsPerTurn: number): ScriptedResponse {
  if (index % (stepsPerTurn + 1) === stepsPerTurn)
    return { text: `Summary of part ${Math.floor(index / (stepsPerTurn + 1)) + 1}.` };
  return { toolCalls: [{ id: `call_${index}`, name: 'list_files', arguments: { dir: `dir${index}` } }] };
}

/** Runs `turns` turns on `agent`, each a followup "Part N" run to idle. */
export async function runParts(agent: Agent, turns: number): Promise<void> {
  for (let turn = 1; turn <= turns; turn++) {
    agent.followup(`Part ${turn}`);
    await agent.whenIdle();
  }
}
