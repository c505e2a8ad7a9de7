import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import '../../src/index.ts';
import { CompactLogCodec } from '../../src/session/stores/compact-log-codec.ts';
import { sameJson } from '../../src/session/stores/compact-log-state.ts';
import {
  compactLogFormat,
  encodeSessionLog,
  fullEnvelopeFormat,
  parseSessionLog,
} from '../../src/session/stores/session-log-format.ts';

// The compact encoder proves by construction (member names, member-by-member comparison) that a
// compact line rebuilds its event, instead of serializing the event to compare. These properties hold
// it to the generic path: every line decodes to an event whose JSON is exactly `JSON.stringify` of
// the original, and whole logs go format 1 → format 0 → format 1 byte for byte.

const createdAt = 1_700_000_000_000;
const header = { version: 0, id: 'codec-property', createdAt } as const;

/** Strings a JSON encoder must get right: escapes, controls, unicode, lone and paired surrogates. */
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom(
    '',
    'ok',
    '"quoted"',
    'back\\slash',
    'line\nbreak\ttab\u0000\u001f',
    'é漢🙂',
    '\u2028\u2029',
  ),
  fc.constantFrom('\ud800', 'a\udc00b', '\udbff\udfff', '\udfff\ud800', '</script>'),
);

/** Numbers whose JSON form is easy to get wrong: -0, huge, tiny, beyond 2^53, fractions. */
const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0, 1e21, 2 ** 53 + 2, 5e-324, Number.MAX_VALUE, 0.1 + 0.2),
);

/** Any JSON value, nested, built from the awkward strings and numbers above. */
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** One step of a tool loop, with knobs that bend each event away from what its compact kind rebuilds. */
const stepPlan = fc.record({
  blocks: fc.array(
    fc.record({
      kind: fc.constantFrom('text', 'reasoning', 'tool-call'),
      deltas: fc.array(text, { minLength: 1, maxLength: 3 }),
      id: fc.oneof(text, fc.constant('call_1')),
      name: text,
      // The block-end's block: as built, with an extra member, or with other text.
      end: fc.constantFrom('built', 'built', 'extra', 'other'),
      // The block-start, delta and block-end chunks' own members: as the loop writes them, one more, or
      // in another order.
      startChunk: fc.constantFrom('built', 'built', 'extra', 'reordered'),
      deltaChunk: fc.constantFrom('built', 'built', 'extra', 'reordered'),
      endChunk: fc.constantFrom('built', 'built', 'extra', 'reordered'),
    }),
    { maxLength: 3 },
  ),
  // The finish chunk's own members: as the loop writes them, or one more.
  finishChunk: fc.constantFrom('built', 'built', 'extra'),
  finish: fc.oneof(
    fc.constant({ kind: 'tool-calls' }),
    fc.constant({ kind: 'stop' }),
    fc.dictionary(text, json),
  ),
  usage: fc.option(fc.record({ inputTokens: number, outputTokens: number }), { nil: undefined }),
  // The reply: content as the run built it, or reordered/extra; the source again, new, or odd.
  content: fc.constantFrom('run', 'run', 'run', 'reversed', 'extra'),
  source: fc.constantFrom('same', 'same', 'other', 'json'),
  sourceJson: json,
  replyId: text,
  sources: fc.constantFrom('run', 'run', 'short'),
  // Tool calls and results: as the reply's blocks say, or bent.
  call: fc.constantFrom('block', 'block', 'other-arguments', 'object-arguments'),
  result: fc.constantFrom('plain', 'plain', 'error', 'error-false', 'extra', 'with-error', 'other-call'),
  resultContent: fc.oneof(
    json,
    fc.constant([{ type: 'text', text: 'ok' }]),
    fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 3 }),
  ),
  resultError: json,
  resultId: text,
  dt: fc.oneof(
    fc.constant(0),
    fc.integer({ min: -5, max: 100 }),
    fc.double({ min: -1, max: 10, noNaN: true }),
  ),
});

const genericEvent = fc.record({
  type: fc.constantFrom('request/context', 'user/message', 'agent/inbox/spliced', 'plugin/custom-thing'),
  data: json,
  ignorable: fc.boolean(),
  surfaceOp: fc.option(fc.constantFrom('append', 'replace'), { nil: undefined }),
  sources: fc.option(fc.array(fc.nat({ max: 50 }), { maxLength: 3 }), { nil: undefined }),
});

const sessionPlan = fc.array(
  fc.record({
    turnReason: fc.oneof(fc.constant({ kind: 'completed' }), fc.constant({ kind: 'aborted' }), json),
    steps: fc.array(stepPlan, { minLength: 1, maxLength: 3 }),
    generic: fc.array(genericEvent, { maxLength: 2 }),
    oddTurn: fc.boolean(),
  }),
  { minLength: 1, maxLength: 3 },
);

type StepPlan = typeof stepPlan extends fc.Arbitrary<infer T> ? T : never;
type SessionPlan = typeof sessionPlan extends fc.Arbitrary<infer T> ? T : never;

/** Builds the events of a plan: the loop's shapes, bent where the plan says; seqs and times in order. */
function buildEvents(plan: SessionPlan): AnySessionEvent[] {
  const events: AnySessionEvent[] = [];
  let time = createdAt;
  let lastTurn = 0;
  let lastSource: unknown = { kind: 'model', provider: 'scripted', model: 'm' };
  const push = (type: string, data: unknown, extras: Record<string, unknown> = {}, dt = 1): number => {
    time += dt;
    const seq = events.length;
    events.push({ type, seq, time, data, ...extras } as AnySessionEvent);
    return seq;
  };
  for (const turnPlan of plan) {
    for (const generic of turnPlan.generic) {
      const extras: Record<string, unknown> = {};
      if (generic.ignorable || generic.type === 'plugin/custom-thing') extras.ignorable = true;
      if (generic.surfaceOp !== undefined) extras.surfaceOp = generic.surfaceOp;
      if (generic.sources !== undefined) extras.sourceEventSeqs = generic.sources;
      push(generic.type, generic.data, extras);
    }
    const turn = turnPlan.oddTurn ? lastTurn + 2 : lastTurn + 1;
    lastTurn = turn;
    push('turn/start', { turn });
    turnPlan.steps.forEach((step, index) => {
      lastSource = appendStep(push, turn, index + 1, step, lastSource);
    });
    push('turn/end', { turn, reason: turnPlan.turnReason });
  }
  return events;
}

type Push = (type: string, data: unknown, extras?: Record<string, unknown>, dt?: number) => number;

/** A chunk as the loop writes it, with one member more, or with its first two members swapped. */
function bent(chunk: Record<string, unknown>, how: string): Record<string, unknown> {
  if (how === 'extra') return { ...chunk, note: 1 };
  if (how !== 'reordered') return chunk;
  const [first, second, ...rest] = Object.entries(chunk);
  return Object.fromEntries([second!, first!, ...rest]);
}

function appendStep(push: Push, turn: number, step: number, plan: StepPlan, lastSource: unknown): unknown {
  push('step/start', { turn, step }, {}, plan.dt);
  const chunk = (value: unknown): number =>
    push('assistant/chunk', { turn, step, chunk: value }, {}, plan.dt);
  const runStart = chunk(
    bent(
      { type: 'block-start', index: 0, blockType: plan.blocks[0]?.kind ?? 'text' },
      plan.blocks[0]?.startChunk ?? 'built',
    ),
  );
  const blocks: Record<string, unknown>[] = [];
  plan.blocks.forEach((block, index) => {
    if (index > 0) chunk(bent({ type: 'block-start', index, blockType: block.kind }, block.startChunk));
    if (block.kind === 'tool-call') {
      block.deltas.forEach((delta, position) =>
        chunk(
          position === 0
            ? { type: 'tool-call-delta', index, id: block.id, name: block.name, argumentsDelta: delta }
            : { type: 'tool-call-delta', index, argumentsDelta: delta },
        ),
      );
    } else {
      const type = block.kind === 'text' ? 'text-delta' : 'reasoning-delta';
      for (const delta of block.deltas) chunk(bent({ type, index, text: delta }, block.deltaChunk));
    }
    const built: Record<string, unknown> =
      block.kind === 'tool-call'
        ? { type: 'tool-call', id: block.id, name: block.name, arguments: block.deltas.join('') }
        : { type: block.kind, text: block.deltas.join('') };
    const ended =
      block.end === 'extra'
        ? { ...built, extra: true }
        : block.end === 'other'
          ? { ...built, ...(block.kind === 'tool-call' ? { arguments: 'x' } : { text: 'x' }) }
          : built;
    chunk(bent({ type: 'block-end', index, block: ended }, block.endChunk));
    blocks.push(ended);
  });
  const runEnd = chunk(bent({ type: 'finish', reason: plan.finish }, plan.finishChunk));
  const seqs = Array.from({ length: runEnd + 1 - runStart }, (_, index) => runStart + index);
  const content =
    plan.content === 'reversed'
      ? [...blocks].reverse()
      : plan.content === 'extra'
        ? [...blocks, { type: 'text', text: '' }]
        : blocks;
  const source =
    plan.source === 'same'
      ? JSON.parse(JSON.stringify(lastSource))
      : plan.source === 'other'
        ? { kind: 'model', provider: 'scripted', model: `m${step}` }
        : plan.sourceJson;
  const message = { id: plan.replyId, role: 'assistant', content, source };
  const reply =
    plan.usage === undefined ? { turn, step, message } : { turn, step, message, usage: plan.usage };
  const sourceEventSeqs = plan.sources === 'short' ? seqs.slice(1) : seqs;
  push('assistant/message', reply, { surfaceOp: 'append', sourceEventSeqs }, plan.dt);
  for (const block of blocks) {
    if (block.type === 'tool-call') appendCall(push, turn, step, plan, block);
  }
  push('step/end', { turn, step });
  return source;
}

function appendCall(
  push: Push,
  turn: number,
  step: number,
  plan: StepPlan,
  block: Record<string, unknown>,
): void {
  const callId = block.id as string;
  const callArguments =
    plan.call === 'other-arguments'
      ? `${String(block.arguments)} `
      : plan.call === 'object-arguments'
        ? { a: 1 }
        : block.arguments;
  const callSeq = push('tool/call', { turn, step, callId, name: block.name, arguments: callArguments });
  const result: Record<string, unknown> = {
    type: 'tool-result',
    toolCallId: callId,
    content: plan.resultContent,
  };
  if (plan.result === 'error') result.isError = true;
  if (plan.result === 'error-false') result.isError = false;
  if (plan.result === 'extra') result.extra = 1;
  const origin = { kind: 'tool', callId: plan.result === 'other-call' ? `${callId}!` : callId };
  const message = { id: plan.resultId, role: 'user', content: [result], source: origin };
  const data =
    plan.result === 'with-error' ? { turn, step, message, error: plan.resultError } : { turn, step, message };
  push('tool/result', data, { surfaceOp: 'append', sourceEventSeqs: [callSeq] });
}

function checkEnvelope(value: unknown, seq: number): string | undefined {
  const record = value as { seq?: unknown };
  return record.seq === seq ? undefined : `seq is ${String(record.seq)}, expected ${seq}`;
}

describe('the compact encoder against the generic path', () => {
  it('every line decodes to exactly the JSON of its event', () => {
    let compactLines = 0;
    fc.assert(
      fc.property(sessionPlan, (plan) => {
        const events = buildEvents(plan);
        const encoder = new CompactLogCodec(createdAt);
        // The plan's envelopes are built as \`Session\` builds them: trusting that writes the same lines.
        const committedEncoder = new CompactLogCodec(createdAt);
        const decoder = new CompactLogCodec(createdAt);
        for (const event of events) {
          const line = encoder.encode(event);
          expect(committedEncoder.encode(event, true)).toBe(line);
          expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true);
          const parsed: unknown = JSON.parse(line);
          if (Array.isArray(parsed) && typeof parsed[0] === 'number') compactLines++;
          const decoded = decoder.decode(parsed, checkEnvelope);
          expect(JSON.stringify(decoded)).toBe(JSON.stringify(event));
        }
      }),
      { numRuns: 400 },
    );
    // The generated logs mostly take the fast kinds: the property is not only about the fallbacks.
    expect(compactLines).toBeGreaterThan(2000);
  });

  it('whole logs go format 1 → format 0 → format 1 byte for byte', () => {
    fc.assert(
      fc.property(sessionPlan, (plan) => {
        const events = buildEvents(plan);
        const compact = encodeSessionLog(header, events, compactLogFormat);
        const full = encodeSessionLog(header, events, fullEnvelopeFormat);
        const context = { id: header.id, path: 'property.jsonl' };
        const fromCompact = parseSessionLog(Buffer.from(compact, 'utf8'), context);
        expect(encodeSessionLog(fromCompact.header, fromCompact.events, fullEnvelopeFormat)).toBe(full);
        const fromFull = parseSessionLog(Buffer.from(full, 'utf8'), context);
        expect(encodeSessionLog(fromFull.header, fromFull.events, compactLogFormat)).toBe(compact);
      }),
      { numRuns: 200 },
    );
  });

  it('writes the loop step in its compact kinds, and the same reply source as a back reference', () => {
    const source = { kind: 'model', provider: 'scripted', model: 'm' };
    const call = { type: 'tool-call', id: 'call_1', name: 'noop', arguments: '{}' };
    const events: AnySessionEvent[] = [];
    const push = (type: string, data: unknown, extras: Record<string, unknown> = {}): void => {
      events.push({
        type,
        seq: events.length,
        time: createdAt + events.length,
        data,
        ...extras,
      } as AnySessionEvent);
    };
    push('turn/start', { turn: 1 });
    for (const step of [1, 2]) {
      const start = events.length + 1;
      push('step/start', { turn: 1, step });
      push('assistant/chunk', {
        turn: 1,
        step,
        chunk: { type: 'block-start', index: 0, blockType: 'tool-call' },
      });
      push('assistant/chunk', {
        turn: 1,
        step,
        chunk: { type: 'tool-call-delta', index: 0, id: 'call_1', name: 'noop', argumentsDelta: '{}' },
      });
      push('assistant/chunk', { turn: 1, step, chunk: { type: 'block-end', index: 0, block: { ...call } } });
      push('assistant/chunk', { turn: 1, step, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } });
      const message = { id: `r${step}`, role: 'assistant', content: [{ ...call }], source: { ...source } };
      push(
        'assistant/message',
        { turn: 1, step, message },
        { surfaceOp: 'append', sourceEventSeqs: [start, start + 1, start + 2, start + 3] },
      );
      push('tool/call', { turn: 1, step, callId: 'call_1', name: 'noop', arguments: '{}' });
      const result = {
        type: 'tool-result',
        toolCallId: 'call_1',
        content: [{ type: 'text', text: 'é "ok"' }],
      };
      push(
        'tool/result',
        {
          turn: 1,
          step,
          message: {
            id: `t${step}`,
            role: 'user',
            content: [result],
            source: { kind: 'tool', callId: 'call_1' },
          },
        },
        { surfaceOp: 'append', sourceEventSeqs: [events.length - 1] },
      );
      push('step/end', { turn: 1, step });
    }
    push('turn/end', { turn: 1, reason: { kind: 'completed' } });
    const encoder = new CompactLogCodec(createdAt);
    const lines = events.map((event) => encoder.encode(event));
    expect(lines.slice(10, 20).join('')).toBe(
      '[6,1,2]\n[3,1,[0,"tool-call"]]\n[13,1,["call_1","noop","{}"]]\n[4,1,0]\n[5,1,"tool-calls"]\n' +
        '[10,1,["r2",0]]\n[11,1,0]\n[12,1,[1,"t2",[{"type":"text","text":"é \\"ok\\""}],0]]\n[7,1,0]\n[9,1,{"kind":"completed"}]\n',
    );
    expect(lines[6]).toBe('[10,1,["r1",{"kind":"model","provider":"scripted","model":"m"}]]\n');
  });
});

describe('sameJson', () => {
  it('is true only when both sides serialize to the same JSON', () => {
    fc.assert(
      fc.property(json, json, (left, right) => {
        if (sameJson(left, right)) expect(JSON.stringify(left)).toBe(JSON.stringify(right));
        expect(sameJson(left, JSON.parse(JSON.stringify(left)))).toBe(true);
      }),
      { numRuns: 500 },
    );
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson(undefined, undefined)).toBe(false);
    expect(sameJson(Number.NaN, Number.NaN)).toBe(false);
    expect(sameJson(new Date(0), new Date(0))).toBe(false);
  });
});
