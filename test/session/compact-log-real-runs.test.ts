import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnySessionEvent, ContentBlock } from '../../src/index.ts';
import { createHarness, defineTool } from '../../src/index.ts';
import { CompactLogCodec } from '../../src/session/stores/compact-log-codec.ts';
import { DiskSessionStore } from '../../src/session/stores/index.ts';
import {
  compactLogFormat,
  encodeSessionLog,
  fullEnvelopeFormat,
  parseSessionLog,
} from '../../src/session/stores/session-log-format.ts';
import type { ScriptedResponse } from '../../src/testing/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';

// The live file writer encodes each event with `encodeInto(lines, event, true, kind)`, as bytes: the
// fast path that trusts the envelope `Session.append` built and takes the compact kinds for the loop's hot lines (`tool/result`,
// `assistant/message`, chunks). These tests hold that path to the general one over whole logs the real
// loop wrote: the bytes on disk, the checked encoder, the decoder and the full-envelope format agree.

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'rein-compact-runs-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Text a JSON encoder must get right: escapes, controls, unicode, line separators, lone surrogates. */
const awkward = [
  'é漢🙂 "quoted" back\\slash',
  'tab\tnul\u0000 \u001f',
  '\u2028\u2029</script>',
  'lone \ud800 and \udc00',
];

/** Tool arguments: nested, with numbers whose JSON is easy to get wrong and awkward keys and strings. */
const nestedArguments = {
  path: 'src/é/🙂.ts',
  options: { depth: [1, 2.5, 1e21, 2 ** 53 + 2, 5e-324, Number.MAX_VALUE, 0.1 + 0.2, -7] },
  deep: { list: [null, true, false, { 'key "q"': awkward[1], '': [[[]], {}] }] },
  text: awkward[3],
};

// Raw argument text is logged verbatim: integers beyond 2^53 and escapes the model wrote stay as written.
const rawArguments = '{"n": 123456789012345678901234567890, "s": "\\ud800\\u00e9", "f": 1.0e+400}';

const tools = [
  defineTool<Record<string, unknown>>({
    name: 'echo',
    description: 'Answers its arguments and awkward text',
    effect: 'read',
    parameters: { type: 'object' },
    execute: (args) => `${JSON.stringify(args)} ${awkward.join(' | ')}`,
  }),
  defineTool<Record<string, unknown>>({
    name: 'write_note',
    description: 'Answers two text blocks (a tool with side effects)',
    effect: 'write',
    parameters: { type: 'object' },
    execute: (): ContentBlock[] => [
      { type: 'text', text: awkward[0]! },
      { type: 'text', text: awkward[2]! },
    ],
  }),
  defineTool<Record<string, unknown>>({
    name: 'fail',
    description: 'Fails',
    effect: 'read',
    parameters: { type: 'object' },
    execute: () => {
      throw new Error(`failed on ${awkward[3]}`);
    },
  }),
  defineTool<Record<string, unknown>>({
    name: 'refuse',
    description: 'Answers an error result with meta',
    effect: 'read',
    parameters: { type: 'object' },
    execute: () => ({
      content: awkward[1]!,
      isError: true,
      errorCode: 'REFUSED',
      meta: { big: 2 ** 53 + 2 },
    }),
  }),
];

/** Scripts of real runs: each is one or more turns of model responses. */
const scripts: Record<string, ScriptedResponse[][]> = {
  'a tool loop with nested arguments and unicode results': [
    [
      ...Array.from({ length: 6 }, (_, index) => ({
        toolCalls: [{ id: `call_${index}`, name: 'echo', arguments: { ...nestedArguments, index } }],
      })),
      { text: ['Done: ', awkward[0]!, awkward[3]!], usage: { inputTokens: 2 ** 53 + 2, outputTokens: 5 } },
    ],
  ],
  'parallel calls, raw arguments, reasoning, errors and a writing tool': [
    [
      {
        reasoning: ['think ', awkward[2]!],
        text: 'Several at once.',
        toolCalls: [
          { id: 'call_a', name: 'echo', arguments: rawArguments },
          { id: 'call_b', name: 'fail', arguments: {} },
          { id: 'call_c', name: 'refuse', arguments: { why: awkward[1] } },
        ],
        usage: { inputTokens: 120, outputTokens: 30 },
      },
      { toolCalls: [{ id: 'call_d', name: 'write_note', arguments: nestedArguments }] },
      { text: awkward },
    ],
    [
      { toolCalls: [{ id: 'call_e', name: 'write_note', arguments: { again: awkward[0] } }] },
      { text: 'Second turn.' },
    ],
  ],
  'an unknown tool and a plain answer': [
    [{ toolCalls: [{ id: 'call_x', name: 'no_such_tool', arguments: { a: 1 } }] }, { text: 'ok' }],
    [{ text: ['just ', 'text ', awkward[3]!] }],
  ],
};

/** Runs a script on the disk store; answers the session file's bytes and the committed events. */
async function run(
  turns: ScriptedResponse[][],
): Promise<{ id: string; bytes: Buffer; events: readonly AnySessionEvent[] }> {
  const root = join(directory, 'sessions');
  const model = new ScriptedProvider({ responses: turns.flat() });
  const harness = createHarness({
    providers: [model],
    tools: tools as never,
    store: new DiskSessionStore({ root, durability: 'process-crash' }),
  });
  const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model' });
  for (let turn = 0; turn < turns.length; turn++) {
    agent.followup(`turn ${turn} ${awkward[turn % awkward.length]}`);
    await agent.whenIdle();
  }
  const events = agent.session.events;
  const id = agent.session.header.id;
  await harness.dispose();
  return { id, bytes: await readFile(join(root, `${id}.jsonl`)), events };
}

function checkEnvelope(value: unknown, seq: number): string | undefined {
  return (value as { seq?: unknown }).seq === seq ? undefined : 'seq out of order';
}

describe('the compact encoder over logs of real runs', () => {
  for (const [name, turns] of Object.entries(scripts)) {
    it(`${name}: the file, the checked encoder and the decoder agree byte for byte`, async () => {
      const { id, bytes, events } = await run(turns);
      const parsed = parseSessionLog(bytes, { id, path: 'real.jsonl' });
      const header = parsed.header;
      expect(parsed.format).toBe(compactLogFormat);
      expect(parsed.tornBytes).toBe(0);
      // What the live writer wrote (fast path) is what the general encoder writes for the same events.
      expect(bytes.toString('utf8')).toBe(encodeSessionLog(header, events, compactLogFormat));
      expect(JSON.stringify(parsed.events)).toBe(JSON.stringify(events));

      const fast = new CompactLogCodec(header.createdAt);
      const checked = new CompactLogCodec(header.createdAt);
      const decoder = new CompactLogCodec(header.createdAt);
      const hotKinds = new Map<string, number>();
      for (const event of events) {
        const line = fast.encode(event, true);
        expect(checked.encode(event)).toBe(line);
        const value: unknown = JSON.parse(line);
        expect(JSON.stringify(decoder.decode(value, checkEnvelope))).toBe(JSON.stringify(event));
        if (Array.isArray(value) && typeof value[0] === 'number')
          hotKinds.set(event.type, (hotKinds.get(event.type) ?? 0) + 1);
      }
      // Every reply, and every tool result without `meta` (which no compact kind holds), took its compact
      // kind, not a fallback.
      const count = (type: string, where = (_event: AnySessionEvent): boolean => true): number =>
        events.filter((event) => event.type === type && where(event)).length;
      expect(hotKinds.get('assistant/message')).toBe(count('assistant/message'));
      const withoutMeta = (event: AnySessionEvent): boolean => !('meta' in (event.data as object));
      expect(hotKinds.get('tool/result') ?? 0).toBe(count('tool/result', withoutMeta));
      expect(count('assistant/message')).toBeGreaterThan(1);

      // Format 0 and back: the full envelopes hold the same events, and re-encode to the same file.
      const full = encodeSessionLog(header, events, fullEnvelopeFormat);
      const fromFull = parseSessionLog(Buffer.from(full, 'utf8'), { id, path: 'full.jsonl' });
      expect(encodeSessionLog(fromFull.header, fromFull.events, compactLogFormat)).toBe(
        bytes.toString('utf8'),
      );
    });
  }

  it('the runs carry what the test is about: lone surrogates, big numbers, nested arguments, errors', async () => {
    const { bytes, events } = await run(
      scripts['parallel calls, raw arguments, reasoning, errors and a writing tool']!,
    );
    const text = bytes.toString('utf8');
    expect(text).toContain('\\ud800');
    expect(text).toContain('123456789012345678901234567890');
    expect(text).toContain('"REFUSED"');
    const results = events.filter((event) => event.type === 'tool/result');
    expect(results.map((event) => (event.data as { error?: unknown }).error !== undefined)).toEqual([
      false,
      true,
      true,
      false,
      false,
    ]);
  });
});
