// `npx tsx bench/encoder.ts`: the format 1 line encoder alone, in a hot loop over the events of one W1
// turn (500 steps of one read-only no-op tool call, ScriptedProvider), as the disk and PostgreSQL
// writers call it (`encodeInto(lines, event, true, kind)`: every line's bytes into one buffer, envelopes as
// `Session` committed them, with the shape its log judged), as one string a line with the same promises
// (`encode(event, true, kind)`), without the log's judgement (`encode(event, true)`), and with every
// envelope checked (`encode(event)`, what a parsed log's re-encoding does). Prints µs per step, median
// (best) of the repetitions, and the turn's bytes. Options: --steps=500 --reps=200
import { performance } from 'node:perf_hooks';
import type { AnySessionEvent } from '../src/index.ts';
import { MemorySessionStore, ScriptedProvider, createHarness, defineTool } from '../src/internal.ts';
import { packedKindOf } from '../src/session/packed-event.ts';
import { CompactLogCodec } from '../src/session/stores/compact-log-codec.ts';
import { LineBytes } from '../src/session/stores/line-bytes.ts';

function option(name: string, fallback: number): number {
  const value = process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  return value !== undefined ? Number(value) : fallback;
}

/** The events of one W1 turn of `steps` steps, in seq order, and the session's creation time. */
async function turnEvents(steps: number): Promise<{ events: AnySessionEvent[]; createdAt: number }> {
  const noop = defineTool<Record<string, never>>({
    name: 'noop',
    description: 'Does nothing',
    effect: 'read',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => 'ok',
  });
  const model = new ScriptedProvider({
    responses: [
      ...Array.from({ length: steps }, (_, index) => ({
        toolCalls: [{ id: `call_${index}`, name: 'noop', arguments: {} }],
      })),
      { text: 'done' },
    ],
  });
  const harness = createHarness({
    providers: [model],
    tools: [noop as never],
    store: new MemorySessionStore(),
  });
  const agent = await harness.createAgent({ provider: 'scripted', model: 'bench-model' });
  const events: AnySessionEvent[] = [];
  harness.hooks.on('session/event', ({ event }) => {
    events.push(event);
  });
  agent.followup('go');
  await agent.whenIdle();
  const createdAt = agent.session.header.createdAt;
  await harness.dispose();
  return { events, createdAt };
}

const steps = option('steps', 500);
const reps = option('reps', 200);
const { events, createdAt } = await turnEvents(steps);
// The kinds the log gave each event as it was committed (judged again here, envelope checked).
const kinds = events.map((event) => packedKindOf(event, false));
const variants = [
  { label: 'encodeInto(lines, event, true, kind)', committed: true, withKinds: true, into: true },
  { label: 'encode(event, true, kind)', committed: true, withKinds: true, into: false },
  { label: 'encode(event, true)', committed: true, withKinds: false, into: false },
  { label: 'encode(event)', committed: false, withKinds: false, into: false },
];
// The writers' buffer, kept across repetitions as a writer keeps it across batches.
const lines = new LineBytes(1 << 20);
for (const { label, committed, withKinds, into } of variants) {
  const perStep: number[] = [];
  let bytes = 0;
  for (let rep = 0; rep < reps; rep++) {
    const codec = new CompactLogCodec(createdAt);
    bytes = 0;
    lines.clear();
    const start = performance.now();
    if (into) {
      for (let index = 0; index < events.length; index++)
        codec.encodeInto(lines, events[index]!, committed, kinds[index]);
      bytes = lines.length;
    } else {
      for (let index = 0; index < events.length; index++)
        bytes += codec.encode(events[index]!, committed, withKinds ? kinds[index] : undefined).length;
    }
    perStep.push(((performance.now() - start) * 1000) / steps);
  }
  perStep.sort((a, b) => a - b);
  console.log(
    `${label} ${events.length} events, ${bytes} bytes: ` +
      `${perStep[perStep.length >> 1]!.toFixed(2)} µs/step (best ${perStep[0]!.toFixed(2)})`,
  );
}
