import { describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/index.ts';
import {
  BlockAssembler,
  HookBus,
  HookModeError,
  LlmService,
  forEachChunk,
  normalizeStream,
  randomId,
} from '../../src/internal.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';

declare module '../../src/hooks/hook-event-map.ts' {
  interface HookEventMap {
    'test/emit': import('../../src/hooks/index.ts').EmitEvent<{ n: number }>;
    'test/serial': import('../../src/hooks/index.ts').SerialEvent<{ n: number }>;
    'test/waterfall': import('../../src/hooks/index.ts').WaterfallEvent<{ n: number }, string>;
  }
}

function bus(reported: unknown[] = []): HookBus {
  const hooks = new HookBus({ reportError: (_event, error) => reported.push(error) });
  hooks.declare({ 'test/emit': 'emit', 'test/serial': 'serial', 'test/waterfall': 'waterfall' });
  return hooks;
}

describe('hook bus', () => {
  it('emit: every listener runs in order; throws and rejections are contained and reported', async () => {
    const reported: unknown[] = [];
    const hooks = bus(reported);
    const seen: string[] = [];
    hooks.on('test/emit', () => {
      seen.push('a');
      throw new Error('a failed');
    });
    hooks.on('test/emit', async () => {
      seen.push('b');
      throw new Error('b rejected');
    });
    hooks.on('test/emit', () => {
      seen.push('c');
    });
    hooks.emit('test/emit', { n: 1 });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(reported.map((error) => (error as Error).message)).toEqual(['a failed', 'b rejected']);
  });

  it('serial: awaited one after another; a throw rejects the dispatch', async () => {
    const hooks = bus();
    const seen: string[] = [];
    hooks.on('test/serial', async () => {
      await new Promise((r) => setTimeout(r, 5));
      seen.push('slow');
    });
    hooks.on('test/serial', () => {
      seen.push('fast');
    });
    await hooks.serial('test/serial', { n: 1 });
    expect(seen).toEqual(['slow', 'fast']);
    hooks.on('test/serial', () => {
      throw new Error('stop');
    });
    await expect(hooks.serial('test/serial', { n: 1 })).rejects.toThrow('stop');
  });

  it('waterfall: first registered is outermost; next() delegates inward; short-circuit skips the inner default', async () => {
    const hooks = bus();
    hooks.on('test/waterfall', async (_p, next) => `outer(${await next()})`);
    hooks.on('test/waterfall', async (_p, next) => `inner(${await next()})`);
    expect(await hooks.waterfall('test/waterfall', { n: 1 }, () => 'default')).toBe('outer(inner(default))');
    const off = hooks.on('test/waterfall', () => 'short');
    expect(await hooks.waterfall('test/waterfall', { n: 1 }, () => 'default')).toBe('outer(inner(short))');
    off();
    let innerRuns = 0;
    hooks.on('test/waterfall', async (_p, next) => {
      await next();
      return next();
    });
    await hooks.waterfall('test/waterfall', { n: 1 }, () => {
      innerRuns++;
      return 'x';
    });
    expect(innerRuns).toBe(1);
  });

  it('an unheard waterfall runs its inner step at once; a throw there is a rejection with the thrown value', async () => {
    const hooks = bus();
    let ran = false;
    const pending = hooks.waterfall('test/waterfall', { n: 1 }, () => {
      ran = true;
      return 'inner';
    });
    expect(ran).toBe(true);
    expect(await pending).toBe('inner');
    const thrown = { code: 'NOT_AN_ERROR' };
    await expect(
      hooks.waterfall('test/waterfall', { n: 1 }, () => {
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    // A listener of another scope does not hear this dispatch: the inner step still runs at once.
    hooks.on('test/waterfall', () => 'scoped', { scope: 'other' });
    expect(hooks.hears('test/waterfall', 'mine')).toBe(false);
    expect(hooks.hears('test/waterfall', 'other')).toBe(true);
    expect(await hooks.waterfall('test/waterfall', { n: 1 }, () => 'mine', 'mine')).toBe('mine');
    expect(await hooks.waterfall('test/waterfall', { n: 1 }, () => 'mine', 'other')).toBe('scoped');
  });

  it('scoped registrations hear only their scope and are unwound together', async () => {
    const hooks = bus();
    const seen: string[] = [];
    hooks.on('test/emit', () => {
      seen.push('global');
    });
    hooks.on(
      'test/emit',
      () => {
        seen.push('agent-a');
      },
      { scope: 'a' },
    );
    hooks.emit('test/emit', { n: 1 }, 'b');
    hooks.emit('test/emit', { n: 1 }, 'a');
    hooks.disposeScope('a');
    hooks.emit('test/emit', { n: 1 }, 'a');
    expect(seen).toEqual(['global', 'global', 'agent-a', 'global']);
  });

  it('an event dispatched with the wrong mode is refused', () => {
    const hooks = bus();
    expect(() => hooks.emit('test/waterfall' as never, { n: 1 } as never)).toThrow(HookModeError);
  });
});

describe('block assembler', () => {
  it('keys blocks by index in first-seen order; the first block-end is authoritative; the last usage wins', () => {
    const assembler = new BlockAssembler();
    const chunks: StreamChunk[] = [
      { type: 'text-delta', index: 1, text: 'Hel' },
      { type: 'reasoning-delta', index: 0, text: 'think' },
      { type: 'text-delta', index: 1, text: 'lo' },
      { type: 'block-end', index: 1, block: { type: 'text', text: 'Hello!' } },
      { type: 'text-delta', index: 1, text: ' ignored' },
      { type: 'tool-call-delta', index: 2, id: '', name: 'read', argumentsDelta: '{"a":' },
      { type: 'tool-call-delta', index: 2, id: '', argumentsDelta: '1}' },
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 7 } },
    ];
    for (const chunk of chunks) assembler.push(chunk);
    const result = assembler.result();
    expect(result.finish).toEqual({ kind: 'stop' });
    expect(result.usage).toEqual({ inputTokens: 5, outputTokens: 7 });
    expect(result.content).toEqual([
      { type: 'text', text: 'Hello!' },
      { type: 'reasoning', text: 'think' },
      { type: 'tool-call', id: 'call-2', name: 'read', arguments: '{"a":1}' },
    ]);
  });

  it('drops every tool call on max-tokens and keeps an interrupted prefix of text and reasoning only', () => {
    const assembler = new BlockAssembler();
    assembler.push({ type: 'text-delta', index: 0, text: 'partial' });
    assembler.push({ type: 'tool-call-delta', index: 1, id: 'c', name: 'x', argumentsDelta: '{' });
    assembler.push({ type: 'text-delta', index: 2, text: '   ' });
    expect(assembler.interruptedPrefix()).toEqual([{ type: 'text', text: 'partial' }]);
    assembler.push({ type: 'finish', reason: { kind: 'max-tokens' } });
    expect(assembler.result().content.map((block) => block.type)).toEqual(['text', 'text']);
  });
});

describe('llm service', () => {
  it('normalizes adapter throws into a terminal finish, and nothing follows a finish', async () => {
    const controller = new AbortController();
    async function* source(): AsyncGenerator<StreamChunk> {
      yield { type: 'text-delta', index: 0, text: 'a' };
      throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    }
    const out: StreamChunk[] = [];
    for await (const chunk of normalizeStream(source, controller.signal)) out.push(chunk);
    expect(out.at(-1)).toEqual({
      type: 'finish',
      reason: { kind: 'error', failure: { message: 'reset', code: 'UNKNOWN' } },
    });
    async function* chatty(): AsyncGenerator<StreamChunk> {
      yield { type: 'finish', reason: { kind: 'stop' } };
      yield { type: 'text-delta', index: 0, text: 'after finish' };
    }
    const after: StreamChunk[] = [];
    for await (const chunk of normalizeStream(chatty, controller.signal)) after.push(chunk);
    expect(after).toEqual([{ type: 'finish', reason: { kind: 'stop' } }]);
  });

  it('opens the source lazily and closes it on early exit or when asked past the finish', async () => {
    const signal = new AbortController().signal;
    const log: string[] = [];
    const source = (label: string) => () => {
      log.push(`open ${label}`);
      return (async function* (): AsyncGenerator<StreamChunk> {
        try {
          yield { type: 'text-delta', index: 0, text: 'a' };
          yield { type: 'finish', reason: { kind: 'stop' } };
          yield { type: 'text-delta', index: 0, text: 'never read' };
        } finally {
          log.push(`closed ${label}`);
        }
      })();
    };
    const lazy = normalizeStream(source('lazy'), signal);
    expect(log).toEqual([]);
    for await (const chunk of lazy) if (chunk.type === 'text-delta') break;
    expect(log).toEqual(['open lazy', 'closed lazy']);
    const full: StreamChunk[] = [];
    for await (const chunk of normalizeStream(source('full'), signal)) full.push(chunk);
    expect(full.map((chunk) => chunk.type)).toEqual(['text-delta', 'finish']);
    expect(log.slice(2)).toEqual(['open full', 'closed full']);
    // A source that throws while opening becomes one terminal finish; an aborted signal marks it aborted.
    const controller = new AbortController();
    controller.abort();
    const aborted: StreamChunk[] = [];
    const failing = () => {
      throw new Error('no route');
    };
    for await (const chunk of normalizeStream(failing, controller.signal)) aborted.push(chunk);
    expect(aborted).toMatchObject([
      { type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED' } } },
    ]);
  });

  it('forEachChunk reads a stream exactly as for-await does, normalized or not', async () => {
    const signal = new AbortController().signal;
    const log: string[] = [];
    const chunks: StreamChunk[] = [
      { type: 'text-delta', index: 0, text: 'a' },
      { type: 'text-delta', index: 0, text: 'b' },
      { type: 'finish', reason: { kind: 'stop' } },
      { type: 'text-delta', index: 0, text: 'after the finish' },
    ];
    const generator = (label: string, failAt?: number) => () => {
      log.push(`open ${label}`);
      return (async function* (): AsyncGenerator<StreamChunk> {
        try {
          for (const [position, chunk] of chunks.entries()) {
            if (position === failAt) throw new Error('reset');
            yield chunk;
          }
        } finally {
          log.push(`closed ${label}`);
        }
      })();
    };
    // A source whose next() answers with a thenable that is not a native promise.
    const thenable = () => {
      log.push('open thenable');
      let position = 0;
      return {
        [Symbol.asyncIterator]: () => ({
          next: () =>
            ({
              then: (resolve: (result: IteratorResult<StreamChunk>) => void) =>
                resolve(
                  position < chunks.length
                    ? { done: false, value: chunks[position++]! }
                    : { done: true, value: undefined },
                ),
            }) as unknown as Promise<IteratorResult<StreamChunk>>,
        }),
      };
    };
    const read = async (stream: AsyncIterable<StreamChunk>, stopAt?: number): Promise<unknown> => {
      const seen: StreamChunk[] = [];
      try {
        await forEachChunk(stream, (chunk) => {
          if (seen.length === stopAt) throw new Error('stop');
          seen.push(chunk);
        });
        return seen;
      } catch (error) {
        return { seen, error: (error as Error).message };
      }
    };
    const iterate = async (stream: AsyncIterable<StreamChunk>, stopAt?: number): Promise<unknown> => {
      const seen: StreamChunk[] = [];
      try {
        for await (const chunk of stream) {
          if (seen.length === stopAt) throw new Error('stop');
          seen.push(chunk);
        }
        return seen;
      } catch (error) {
        return { seen, error: (error as Error).message };
      }
    };
    const cases: [string, () => AsyncIterable<StreamChunk>, number | undefined][] = [
      ['whole', () => normalizeStream(generator('whole'), signal), undefined],
      ['stopped', () => normalizeStream(generator('stopped'), signal), 1],
      ['failing', () => normalizeStream(generator('failing', 1), signal), undefined],
      ['thenable', () => normalizeStream(thenable, signal), undefined],
      ['raw', () => generator('raw')(), undefined],
      ['raw stopped', () => generator('raw stopped')(), 1],
    ];
    for (const [label, make, stopAt] of cases) {
      log.length = 0;
      const expected = await iterate(make(), stopAt);
      const expectedLog = log.splice(0);
      expect(await read(make(), stopAt), label).toEqual(expected);
      expect(log, label).toEqual(expectedLog);
    }
    expect(await read(normalizeStream(generator('whole'), signal))).toEqual(chunks.slice(0, 3));
    expect(await read(normalizeStream(generator('stopped'), signal), 1)).toEqual({
      seen: [chunks[0]],
      error: 'stop',
    });
  });

  it('randomId makes flat, distinct version 4 UUIDs', () => {
    const ids = new Set<string>();
    for (let index = 0; index < 2000; index++) {
      const id = randomId();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(2000);
  });

  it('a scripted provider records requests unless told not to', async () => {
    const signal = new AbortController().signal;
    const request = { provider: 'scripted', model: 'm', messages: [] };
    const recording = new ScriptedProvider({ responses: [{ text: 'a' }] });
    const quiet = new ScriptedProvider({ responses: [{ text: 'a' }], recordRequests: false });
    for (const provider of [recording, quiet]) for await (const _chunk of provider.stream(request, signal));
    expect(recording.requests).toEqual([request]);
    expect(quiet.requests).toEqual([]);
  });

  it('reports NO_ADAPTER in-band and lets an llm/stream listener short-circuit before lookup', async () => {
    const hooks = new HookBus();
    const llm = new LlmService(hooks);
    const signal = new AbortController().signal;
    const request = { provider: 'ghost', model: 'm', messages: [] };
    const chunks: StreamChunk[] = [];
    for await (const chunk of await llm.stream(request, { signal })) chunks.push(chunk);
    expect(chunks).toMatchObject([
      { type: 'finish', reason: { kind: 'error', failure: { code: 'NO_ADAPTER' } } },
    ]);
    const scripted = new ScriptedProvider({ responses: [{ text: 'served' }] });
    llm.register(scripted);
    hooks.on('llm/stream', async ({ request: r, signal: s }, next) =>
      r.provider === 'ghost' ? llm.stream({ ...r, provider: 'scripted' }, { signal: s }) : next(),
    );
    const served: StreamChunk[] = [];
    for await (const chunk of await llm.stream(request, { signal })) served.push(chunk);
    expect(served.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } });
    expect(() => llm.register(new ScriptedProvider())).toThrowError(/already registered/);
  });

  it('replaces a registered adapter on request: later requests use the new one, a prepared route too', async () => {
    const hooks = new HookBus();
    const llm = new LlmService(hooks);
    llm.register(new ScriptedProvider({ responses: [{ text: 'old' }] }));
    const config = Object.freeze({ provider: 'scripted', model: 'm' });
    const before = llm.prepare(config);
    const replacement = new ScriptedProvider({ responses: [{ text: 'new' }] });
    const dispose = llm.register(replacement, { replace: true });
    expect(llm.adapter('scripted')).toBe(replacement);
    expect(llm.prepare(config)).not.toBe(before);
    const signal = new AbortController().signal;
    const texts: string[] = [];
    for await (const chunk of await llm.stream({ ...config, messages: [] }, { signal }))
      if (chunk.type === 'text-delta') texts.push(chunk.text);
    expect(texts.join('')).toBe('new');
    dispose();
    expect(llm.providers()).toEqual([]);
  });
});
