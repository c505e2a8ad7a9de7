import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import '../../src/index.ts';
import { eventEntry, packedKindOf } from '../../src/session/packed-event.ts';
import { CompactLogCodec } from '../../src/session/stores/compact-log-codec.ts';

// The live writers hand the encoder the shape the session's log judged each event to have
// (`packedKindOf`), and the encoder then checks only its own state. These properties hold that path to
// the general one on sequences that are often not valid logs (chunks of another step, deltas of another
// block index, boundaries out of order), where each compact kind must be refused exactly as before.

const createdAt = 1_700_000_000_000;

/** A small number, so that turns, steps and block indexes often match the encoder's state and often not. */
const small = fc.integer({ min: 0, max: 3 });

const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', 'é🙂', '"q"\n', '\ud800'));

/** The chunk of every shape the log packs, and a few it does not. */
const shapedChunk = fc.oneof(
  fc.record({ type: fc.constantFrom('text-delta', 'reasoning-delta'), index: small, text }),
  fc.record({
    type: fc.constant('block-start'),
    index: small,
    blockType: fc.constantFrom('text', 'reasoning', 'tool-call'),
  }),
  fc.record({
    type: fc.constant('block-end'),
    index: small,
    block: fc.oneof(
      fc.record({ type: fc.constant('text'), text }),
      fc.record({ type: fc.constant('reasoning'), text }),
    ),
  }),
  fc.record({
    type: fc.constant('finish'),
    reason: fc.record({ kind: fc.constantFrom('stop', 'tool-calls', 'max-tokens') }),
  }),
  fc.record({
    type: fc.constant('usage'),
    usage: fc.record({ inputTokens: small, outputTokens: small }),
  }),
  fc.record({
    type: fc.constant('tool-call-delta'),
    index: small,
    id: fc.constantFrom('call_1', 'call_2'),
    name: fc.constant('noop'),
    argumentsDelta: fc.constantFrom('{}', '{"a":'),
  }),
  fc.record({ type: fc.constant('tool-call-delta'), index: small, argumentsDelta: text }),
);

/**
 * Those chunks, and the same bent off their shapes (a member too many, a text that is no string): the
 * log vouches only for such an event's envelope and data, and the chunk's own checks must still run.
 */
const chunk = fc.oneof(
  { weight: 4, arbitrary: shapedChunk },
  { weight: 1, arbitrary: shapedChunk.map((value) => ({ ...value, extra: 1 })) },
  { weight: 1, arbitrary: shapedChunk.map((value) => ({ ...value, text: 7 })) },
);

/**
 * One event of the kinds the log packs: boundaries and chunks. Most take their turn and step from the
 * log so far (`inState`), so that the compact kinds come up; the rest draw them freely.
 */
const packable = fc.record({
  type: fc.constantFrom(
    'assistant/chunk',
    'assistant/chunk',
    'assistant/chunk',
    'assistant/chunk',
    'turn/start',
    'step/start',
    'step/end',
    'turn/end',
  ),
  inState: fc.integer({ min: 0, max: 4 }).map((draw) => draw > 0),
  turn: small,
  step: small,
  chunk,
  kind: fc.constantFrom('completed', 'aborted', 'interrupted'),
});

type Packable = {
  type: string;
  inState: boolean;
  turn: number;
  step: number;
  chunk: unknown;
  kind: string;
};

function deepFreeze<Value>(value: Value): Value {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/** The events of a plan with their envelopes as `Session` builds them, frozen as it commits them. */
function eventsOf(plan: readonly Packable[]): AnySessionEvent[] {
  let lastTurn = 0;
  let openTurn: number | undefined;
  let openStep: number | undefined;
  let nextStep = 0;
  return plan.map((entry, seq) => {
    const type = entry.type;
    let turn = entry.turn;
    let step = entry.step;
    if (entry.inState) {
      turn = type === 'turn/start' ? lastTurn + 1 : (openTurn ?? turn);
      step = type === 'step/start' ? nextStep : (openStep ?? step);
    }
    if (type === 'turn/start') [lastTurn, openTurn, nextStep] = [turn, turn, 0];
    else if (type === 'turn/end') [openTurn, openStep] = [undefined, undefined];
    else if (type === 'step/start') [openStep, nextStep] = [step, step + 1];
    else if (type === 'step/end') openStep = undefined;
    let data: unknown;
    if (type === 'assistant/chunk') data = { turn, step, chunk: entry.chunk };
    else if (type === 'turn/start') data = { turn };
    else if (type === 'turn/end') data = { turn, reason: { kind: entry.kind } };
    else data = { turn, step };
    return deepFreeze({ type, seq, time: createdAt + seq * 3, data }) as AnySessionEvent;
  });
}

describe('the compact encoder given the log’s shape judgement', () => {
  it('writes the line the general path writes, whatever its state', () => {
    let events = 0;
    let vouched = 0;
    let compact = 0;
    fc.assert(
      fc.property(fc.array(packable, { minLength: 1, maxLength: 60, size: 'medium' }), (plan) => {
        const general = new CompactLogCodec(createdAt);
        const packed = new CompactLogCodec(createdAt);
        for (const event of eventsOf(plan as Packable[])) {
          events++;
          const kind = packedKindOf(event, true);
          if (kind !== eventEntry) vouched++;
          const line = general.encode(event, true);
          expect(packed.encode(event, true, kind)).toBe(line);
          if (/^\[\d/.test(line)) compact++;
        }
      }),
      { numRuns: 500 },
    );
    // Nearly every event was vouched for, and a good share took a compact kind (in these free sequences
    // many chunks fall outside an open step): the property is not only about fallbacks.
    expect(vouched).toBeGreaterThan(events * 0.95);
    expect(compact).toBeGreaterThan(events * 0.12);
  });

  it('takes the compact kinds of a well-formed step on the vouched path', () => {
    const entry = (type: string, chunk?: unknown): Packable => ({
      type,
      inState: true,
      turn: 0,
      step: 0,
      chunk,
      kind: 'completed',
    });
    const plan = [
      entry('turn/start'),
      entry('step/start'),
      entry('assistant/chunk', { type: 'block-start', index: 0, blockType: 'text' }),
      entry('assistant/chunk', { type: 'text-delta', index: 0, text: 'hi' }),
      entry('assistant/chunk', { type: 'block-end', index: 0, block: { type: 'text', text: 'hi' } }),
      entry('assistant/chunk', { type: 'finish', reason: { kind: 'stop' } }),
      entry('step/end'),
      entry('turn/end'),
    ];
    const codec = new CompactLogCodec(createdAt);
    const lines = eventsOf(plan).map((event) => codec.encode(event, true, packedKindOf(event, true)));
    expect(lines.map((line) => (JSON.parse(line) as unknown[])[0])).toEqual([8, 6, 3, 1, 4, 5, 7, 9]);
  });
});
