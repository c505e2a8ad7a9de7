import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/index.ts';
import { OutputCollector } from '../../src/internal.ts';
import type { Sandbox } from './support.ts';
import { metaOf, run, sandbox, textOf, toolsOf } from './support.ts';

let box: Sandbox;
let tools: Record<string, Tool>;

beforeEach(() => {
  box = sandbox('rein-bounded-');
  tools = toolsOf(box);
});
afterEach(() => box.cleanup());

const notice =
  /\[\.\.\. (\d+) bytes omitted \((\d+) lines\) of (\d+) bytes \((\d+) lines\); the full output is saved in (\S+) \.\.\.\]\n/;

/** Splits a bounded text into head, the notice's facts and tail. */
function parse(text: string) {
  const match = notice.exec(text);
  if (match === null) throw new Error(`no omission notice in: ${text.slice(0, 200)}`);
  const before = text.slice(0, match.index);
  return {
    head: Buffer.from(before.slice(0, -1)),
    headText: before.slice(0, -1),
    tail: Buffer.from(text.slice(match.index + match[0].length)),
    omittedBytes: Number(match[1]),
    omittedLines: Number(match[2]),
    totalBytes: Number(match[3]),
    totalLines: Number(match[4]),
    path: match[5]!,
  };
}

/** Streams a file region: its SHA-256, byte count and newline count. */
async function digest(
  path: string,
  start = 0,
  end = Infinity,
): Promise<{ sha: string; bytes: number; newlines: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  let newlines = 0;
  const stream = createReadStream(path, { start, ...(Number.isFinite(end) ? { end: end - 1 } : {}) });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
    for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) newlines++;
  }
  return { sha: hash.digest('hex'), bytes, newlines };
}

/** The SHA-256 of `total` bytes of a repeated pattern, computed without the whole text in memory. */
function patternSha(pattern: string, total: number): string {
  const hash = createHash('sha256');
  const block = Buffer.from(pattern.repeat(Math.ceil(65_536 / pattern.length)));
  const usable = block.length - (block.length % pattern.length);
  let left = total;
  while (left > 0) {
    const take = Math.min(left, usable);
    hash.update(block.subarray(0, take));
    left -= take;
  }
  return hash.digest('hex');
}

async function checkBounded(text: string, cap: number) {
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(cap);
  const facts = parse(text);
  const spill = statSync(facts.path);
  expect(spill.mode & 0o777).toBe(0o600);
  expect(spill.size).toBe(facts.totalBytes);
  // Head and tail are exactly the spilled output's first and last bytes; the notice counts the middle.
  const headSha = await digest(facts.path, 0, facts.head.length);
  expect(headSha.sha).toBe(createHash('sha256').update(facts.head).digest('hex'));
  const tailSha = await digest(facts.path, facts.totalBytes - facts.tail.length);
  expect(tailSha.sha).toBe(createHash('sha256').update(facts.tail).digest('hex'));
  expect(facts.omittedBytes).toBe(facts.totalBytes - facts.head.length - facts.tail.length);
  const middle = await digest(facts.path, facts.head.length, facts.totalBytes - facts.tail.length);
  expect(middle.bytes).toBe(facts.omittedBytes);
  expect(middle.newlines).toBe(facts.omittedLines);
  return facts;
}

describe('bounded output', () => {
  it('bounds 50 MB of output: head, tail, exact omitted counts, spill file identical byte for byte', async () => {
    const total = 50 * 1024 * 1024;
    const line = 'line of output 0123456789\n';
    const result = await run(tools.bash, { command: `yes 'line of output 0123456789' | head -c ${total}` });
    const text = textOf(result.output);
    expect(text.endsWith('\n[exit code 0]')).toBe(true);
    const facts = await checkBounded(text.slice(0, -'\n[exit code 0]'.length), 30_000);
    expect(facts.totalBytes).toBe(total);
    expect(facts.totalLines).toBe(Math.ceil(total / line.length));
    // The cut falls on line ends, so the omitted middle is whole lines.
    expect(facts.headText.endsWith('\n')).toBe(true);
    expect(facts.omittedBytes % line.length).toBe(0);
    expect(facts.omittedLines).toBe(facts.omittedBytes / line.length);
    expect((await digest(facts.path)).sha).toBe(patternSha(line, total));
    expect(metaOf(result.output)).toMatchObject({ outputBytes: total, outputFile: facts.path });
  }, 120_000);

  it('bounds a 10 MB single line by bytes, with no lines omitted', async () => {
    const total = 10 * 1024 * 1024;
    const result = await run(tools.bash, { command: `head -c ${total} /dev/zero | tr '\\0' 'a'` });
    const text = textOf(result.output);
    expect(text.endsWith('\n[exit code 0]')).toBe(true);
    const facts = await checkBounded(text.slice(0, -'\n[exit code 0]'.length), 30_000);
    expect(facts.totalBytes).toBe(total);
    expect(facts.totalLines).toBe(1);
    expect(facts.omittedLines).toBe(0);
    expect(facts.head.length + facts.tail.length + facts.omittedBytes).toBe(total);
    expect((await digest(facts.path)).sha).toBe(patternSha('a', total));
  }, 120_000);

  it('keeps multi-byte characters whole at the cuts and honours a configured cap', async () => {
    const collector = new OutputCollector({
      directory: `${box.reinHome}/tool-output`,
      limit: { maxBytes: 2_000 },
    });
    for (let index = 0; index < 1_000; index++) collector.push('€😀é');
    const bounded = collector.finish();
    expect(bounded.totalBytes).toBe(1_000 * 9);
    expect(bounded.text).not.toContain('\uFFFD');
    await checkBounded(bounded.text, 2_000);
    const small = new OutputCollector({ directory: `${box.reinHome}/tool-output` });
    small.push('short\n');
    expect(small.finish()).toEqual({
      text: 'short\n',
      totalBytes: 6,
      totalLines: 1,
      omittedBytes: 0,
      omittedLines: 0,
    });
  });

  it('bounds every built-in tool result, not only bash', async () => {
    const capped = toolsOf(box, { outputLimit: { maxBytes: 1_500 } });
    const many = Array.from({ length: 300 }, (_, index) => `file-with-a-rather-long-name-${index}.txt`);
    for (const name of many) await run(capped.write_file, { path: `dir/${name}`, content: 'needle\n' });
    for (const [name, args] of [
      ['list_dir', { path: 'dir' }],
      ['glob', { pattern: '**/*.txt' }],
      ['grep', { pattern: 'needle', max_results: 1000 }],
    ] as const) {
      const result = await run(capped[name], args);
      await checkBounded(textOf(result.output), 1_500);
    }
  });
});
