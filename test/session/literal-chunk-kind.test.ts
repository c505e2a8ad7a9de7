import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnySessionEvent, SessionLog, StreamChunk } from '../../src/internal.ts';
import { Session, appendChunk, literalChunk, packHeldEvents } from '../../src/internal.ts';
import { chunkEntry, eventEntry, literalChunkKind, packedKindOf } from '../../src/session/packed-event.ts';

// The loop appends a provider's chunk with the packed kind its literal copy implies (`appendChunk`), so
// the log does not judge the event again. That kind must be exactly the one `packedKindOf` gives the
// committed event, or the log would pack it wrongly; these properties hold the two together, over the
// common shapes and their edges (block indexes past what a packed entry holds, block types and finish
// kinds the log does not number, empty texts).

const index = fc.oneof(
  fc.integer({ min: 0, max: 3 }),
  fc.constantFrom(2 ** 30 - 1, 2 ** 30, 2 ** 31 - 1, 2 ** 31, -1, -0, 1.5),
);
const text = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('', '\ud800', 'é🙂'));
const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text }),
  fc.record({
    type: fc.constant('tool-call'),
    id: fc.constant('call_1'),
    name: fc.constant('noop'),
    arguments: fc.constantFrom('{}', '{"a":1}'),
  }),
);

/** Chunks of every shape `literalChunk` copies, with values on both sides of what it and the log accept. */
const chunk: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ type: fc.constantFrom('text-delta', 'reasoning-delta'), index, text }),
  fc.record({
    type: fc.constant('block-start'),
    index,
    blockType: fc.constantFrom('text', 'reasoning', 'tool-call', 'image', 'tool-result', 'video'),
  }),
  fc.record({ type: fc.constant('block-end'), index, block }),
  fc.record({
    type: fc.constant('finish'),
    reason: fc.record({ kind: fc.constantFrom('stop', 'tool-calls', 'max-tokens', 'error') }),
  }),
  fc.record({
    type: fc.constant('usage'),
    usage: fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() }),
  }),
  fc.record({
    type: fc.constant('tool-call-delta'),
    index,
    id: fc.constant('call_1'),
    name: fc.constant('noop'),
    argumentsDelta: text,
  }),
  fc.record({ type: fc.constant('tool-call-delta'), index, id: fc.constant('call_1'), argumentsDelta: text }),
);

describe('the packed kind of a literal chunk', () => {
  it('is the kind packedKindOf gives the committed event', () => {
    let literals = 0;
    const kinds = new Set<number>();
    fc.assert(
      fc.property(chunk, fc.nat({ max: 5 }), fc.nat({ max: 5 }), (raw, turn, step) => {
        const literal = literalChunk(raw as StreamChunk);
        if (literal === undefined) return;
        literals++;
        const data = Object.freeze({ turn, step, chunk: literal });
        const event = Object.freeze({ type: 'assistant/chunk', seq: 0, time: 1_700_000_000_000, data });
        const kind = literalChunkKind(literal);
        kinds.add(kind);
        expect(kind).toBe(packedKindOf(event as AnySessionEvent, true));
        expect(kind).not.toBe(eventEntry);
      }),
      { numRuns: 3000 },
    );
    // Most generated chunks were literals, and the kinds covered every chunk kind the log numbers.
    expect(literals).toBeGreaterThan(2000);
    expect(kinds.has(chunkEntry)).toBe(true);
    expect(kinds.size).toBeGreaterThan(10);
  });

  it('leaves the log as the general append leaves it, event for event', () => {
    const chunks = fc.sample(chunk, { numRuns: 400, seed: 7 }) as StreamChunk[];
    const header = { version: 0 as const, id: 'literal-kinds', createdAt: 1 };
    const viaKinds = new Session({ header });
    const viaAppend = new Session({ header });
    for (const session of [viaKinds, viaAppend]) {
      session.append('turn/start', { turn: 1 });
      session.append('step/start', { turn: 1, step: 1 });
    }
    for (const raw of chunks) {
      // Literal or not (odd values take the walk, bad ones throw alike), both logs take the same event.
      let fromKinds: unknown;
      let fromAppend: unknown;
      try {
        fromKinds = appendChunk(viaKinds, 1, 1, raw).data;
      } catch (error) {
        fromKinds = (error as { code?: string }).code;
      }
      try {
        fromAppend = viaAppend.append('assistant/chunk', { turn: 1, step: 1, chunk: raw }).data;
      } catch (error) {
        fromAppend = (error as { code?: string }).code;
      }
      expect(JSON.stringify(fromKinds)).toBe(JSON.stringify(fromAppend));
    }
    // Read back through the packed log, every event is what the general path committed.
    for (const session of [viaKinds, viaAppend]) packHeldEvents(session.log as SessionLog);
    const strip = (events: readonly AnySessionEvent[]): string =>
      JSON.stringify(events.map(({ time: _time, ...rest }) => rest));
    expect(strip(viaKinds.events)).toBe(strip(viaAppend.events));
    expect(viaKinds.length).toBeGreaterThan(300);
  });
});
