import { describe, expect, it } from 'vitest';
import type { AnySessionEvent, TranscriptCarry, TranscriptPricing } from '../../src/index.ts';
import { Transcript, TranscriptPageError, defaultRecordViews } from '../../src/index.ts';
import { transcriptCases } from './transcript-cases.ts';

const views = defaultRecordViews;

// Prices whose sums are not exact in binary, so a cost summed in another order would show.
function pricing(provider: string, model: string): TranscriptPricing | undefined {
  if (provider === 'scripted' && model === 'test-model')
    return { input: 0.1, output: 0.3, cachedInput: 0.07 };
  return undefined;
}

// What a server sends and a page receives: the carry as JSON.
function wire(carry: TranscriptCarry): TranscriptCarry {
  return JSON.parse(JSON.stringify(carry)) as TranscriptCarry;
}

/** A transcript of `log[from, to)`, going on from the carry of everything before `from`. */
function page(log: readonly AnySessionEvent[], from: number, to: number): Transcript {
  const carry = from > 0 ? wire(Transcript.of(log.slice(0, from), { views }).carry()) : undefined;
  const transcript = new Transcript({ views, ...(carry !== undefined ? { carry } : {}) });
  for (const event of log.slice(from, to)) transcript.apply(event);
  return transcript;
}

function expectSameFold(paged: Transcript, whole: Transcript): void {
  expect(paged.items).toEqual(whole.items);
  expect(paged.turns).toEqual(whole.turns);
  expect(paged.usage()).toEqual(whole.usage());
  expect(paged.cost(pricing)).toEqual(whole.cost(pricing));
  for (const turn of whole.turns)
    expect(paged.cost(pricing, turn.turn)).toEqual(whole.cost(pricing, turn.turn));
  expect(paged.activity).toEqual(whole.activity);
  expect(paged.openTurn).toBe(whole.openTurn);
  expect(paged.todos).toEqual(whole.todos);
  expect(paged.nextSeq).toBe(whole.nextSeq);
  expect(paged.startSeq).toBe(0);
  for (const view of views) expect(paged.stateOf(view)).toEqual(whole.stateOf(view));
}

describe('transcript carry', () => {
  for (const testCase of transcriptCases) {
    it(`a fold from any cut goes on like the whole fold: ${testCase.name}`, async () => {
      const log = await testCase.log();
      const whole = Transcript.of(log, { views });
      for (let cut = 0; cut <= log.length; cut++) {
        const tail = page(log, cut, log.length);
        expect(tail.startSeq).toBe(cut);
        // Before anything is put in front, the tail shows exactly the items its own events created.
        expect(tail.items).toEqual(whole.items.filter((item) => item.seq >= cut));
        expect(tail.usage()).toEqual(whole.usage());
        expect(tail.cost(pricing)).toEqual(whole.cost(pricing));
        expect(tail.activity).toEqual(whole.activity);
        tail.prepend(page(log, 0, cut));
        expectSameFold(tail, whole);
      }
    });

    it(`prepending pages one by one rebuilds the whole transcript: ${testCase.name}`, async () => {
      const log = await testCase.log();
      const whole = Transcript.of(log, { views });
      const stride = Math.max(1, Math.floor(log.length / 10));
      for (let first = 1; first < log.length; first += stride) {
        for (let second = first + 1; second < log.length; second += stride) {
          const paged = page(log, second, log.length);
          paged.prepend(page(log, first, second));
          expect(paged.startSeq).toBe(first);
          paged.prepend(page(log, 0, first));
          expectSameFold(paged, whole);
        }
      }
    });
  }

  it('prices the running example (the cost comparisons above compare real sums)', async () => {
    const whole = Transcript.of(await transcriptCases[0]!.log(), { views });
    expect(whole.cost(pricing).usd).toBeGreaterThan(0);
    expect(page(await transcriptCases[0]!.log(), 5, Infinity).cost(pricing)).toEqual(whole.cost(pricing));
  });

  it('refuses a page that does not end where the transcript starts', async () => {
    const log = await transcriptCases[0]!.log();
    const tail = page(log, 10, log.length);
    const error = (() => {
      try {
        tail.prepend(page(log, 0, 9));
        return undefined;
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(TranscriptPageError);
    expect((error as TranscriptPageError).code).toBe('TRANSCRIPT_PAGE_MISMATCH');
    expect(tail.startSeq).toBe(10);
  });

  it('is plain JSON: a carry survives the wire unchanged', async () => {
    const log = await transcriptCases[0]!.log();
    for (let cut = 0; cut <= log.length; cut++) {
      const carry = Transcript.of(log.slice(0, cut), { views }).carry();
      expect(wire(carry)).toEqual(carry);
      expect(carry.seq).toBe(cut);
    }
  });
});
