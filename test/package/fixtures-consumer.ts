// The files of the consumer project that test/package/pack-install.test.ts installs the packed tarball into.

/** A plain ES module using the installed SDK and `rein/testing`: one scripted turn with one tool call. */
export const scriptedTurnModule = `
import { createHarness, defineTool } from 'rein';
import { ScriptedProvider, eventTypes } from 'rein/testing';

const model = new ScriptedProvider({
  responses: [
    { text: 'Let me read it.', toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'README.md' } }] },
    { text: 'It is a readme.' },
  ],
});
const harness = createHarness({
  providers: [model],
  tools: [
    defineTool({
      name: 'read_file',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      isConcurrencySafe: () => true,
      execute: ({ path }) => 'contents of ' + path,
    }),
  ],
});
const agent = await harness.createAgent({ provider: 'scripted', model: 'demo' });
agent.followup('Summarize the README');
await agent.whenIdle();
const results = agent.session.events.filter((event) => event.type === 'tool/result').map((event) => event.data);
console.log(JSON.stringify({ types: eventTypes(agent.session, { chunks: false }), results }));
await harness.dispose();
`;

/**
 * A TypeScript file over the exported types: a plugin on the hook bus, a typed tool, narrowing of a durable
 * event, and two mistakes the declarations must reject (\`@ts-expect-error\` fails the check when they are
 * accepted, e.g. because the types resolved to \`any\`).
 */
export const typedUsage = `
import { createHarness, defineTool, isEventOfType, HarnessError } from 'rein';
import type { AnySessionEvent, HarnessPlugin, Tool, TurnEndReason, UserMessage } from 'rein';
import { ScriptedProvider } from 'rein/testing';
import type { ScriptedResponse } from 'rein/testing';

const reply: ScriptedResponse = { text: 'done' };
const echo: Tool<{ text: string }> = defineTool<{ text: string }>({
  name: 'echo',
  description: 'Echo the text',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: ({ text }) => text.toUpperCase(),
});

const seen: string[] = [];
const counter: HarnessPlugin = {
  name: 'counter',
  setup(host) {
    return host.hooks.on('session/event', ({ event }: { event: AnySessionEvent }) => {
      seen.push(event.type);
    });
  },
};

export async function main(): Promise<TurnEndReason | undefined> {
  const harness = createHarness({ providers: [new ScriptedProvider({ responses: [reply] })], tools: [echo], plugins: [counter] });
  const agent = await harness.createAgent({ provider: 'scripted', model: 'demo' });
  agent.followup('hi');
  await agent.whenIdle();
  let reason: TurnEndReason | undefined;
  for (const event of agent.session.events) {
    if (isEventOfType(event, 'turn/end')) reason = event.data.reason;
    if (isEventOfType(event, 'user/message')) {
      const message: UserMessage = event.data;
      void message;
    }
    if (isEventOfType(event, 'tool/result')) {
      // @ts-expect-error a tool result's data has no 'reason'
      void event.data.reason;
    }
  }
  // @ts-expect-error a tool's execute receives its declared arguments, not anything
  defineTool<{ text: string }>({ name: 'bad', description: '', parameters: {}, execute: ({ missing }) => missing });
  // @ts-expect-error the scripted provider's options are checked
  new ScriptedProvider({ responses: 'not a list' });
  if (seen.length === 0) throw new HarnessError('EMPTY', 'no events');
  await harness.dispose();
  return reason;
}
`;
