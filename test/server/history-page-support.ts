import { expect } from 'vitest';
import type { AnySessionEvent, TranscriptCarry, TranscriptPricing } from '../../src/index.ts';
import { Transcript, defaultRecordViews } from '../../src/index.ts';
import { settledHistory } from '../../src/server/settled-history.ts';
import type { ScriptedTurn } from '../../src/testing/index.ts';
import type { ServerFixture } from './support.ts';

/** One answer of `GET /api/sessions/:id/events?tail=…`. */
export interface HistoryPage {
  events: AnySessionEvent[];
  carry: TranscriptCarry;
  start: number;
  end: number;
}

/** The record views the history-page tests fold with (the server's defaults). */
export const historyViews = defaultRecordViews;

/** A price list for comparing costs of folds. */
export const historyPricing = (): TranscriptPricing => ({ input: 0.1, output: 0.3 });

/** `count` turns of `steps` read_file steps and an answer each, every response reporting usage. */
export function longResponses(count: number, steps: number, from = 1): ScriptedTurn[] {
  const script: ScriptedTurn[] = [];
  for (let turn = from; turn < from + count; turn++) {
    for (let step = 1; step <= steps; step++) {
      script.push({
        toolCalls: [{ id: `l${turn}-${step}`, name: 'read_file', arguments: { path: `l${turn}-${step}` } }],
        usage: { inputTokens: 3 * turn + step, outputTokens: 1 },
      });
    }
    script.push({ text: [`Done `, `${turn}.`], usage: { inputTokens: 5, outputTokens: turn } });
  }
  return script;
}

/** The pages a client reads opening session `id` on `server`: the last `tail` events, then back to seq 0. */
export async function pageThrough(server: ServerFixture, id: string, tail: number): Promise<HistoryPage[]> {
  const get = async (query: string): Promise<HistoryPage> => {
    const answer = await server.api('GET', `/api/sessions/${id}/events?${query}`);
    expect(answer.status).toBe(200);
    return answer.json as HistoryPage;
  };
  const pages = [await get(`tail=${tail}`)];
  while (pages.at(-1)!.start > 0) pages.push(await get(`tail=${tail}&before=${pages.at(-1)!.start}`));
  return pages;
}

/** Every page's carry is the whole fold of the log before it, and the pages fold like the whole log. */
export function expectWholeFold(open: { pages: HistoryPage[]; logged: AnySessionEvent[] }): void {
  const { pages, logged } = open;
  const views = historyViews;
  const whole = Transcript.of(logged, { views });
  expect(pages[0]!.end).toBe(logged.length);
  let transcript: Transcript | undefined;
  for (const page of pages) {
    expect(page.events).toEqual(settledHistory(logged.slice(page.start, page.end)));
    expect(page.carry).toEqual(
      JSON.parse(JSON.stringify(Transcript.of(logged.slice(0, page.start), { views }).carry())),
    );
    const fold = new Transcript({ views, carry: page.carry });
    for (const event of page.events) fold.apply(event);
    if (transcript === undefined) transcript = fold;
    else transcript.prepend(fold);
  }
  expect(transcript!.items).toEqual(whole.items);
  expect(transcript!.cost(historyPricing, 3)).toEqual(whole.cost(historyPricing, 3));
}
