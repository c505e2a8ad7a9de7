import { describe, expect, it } from 'vitest';
import { Transcript, defaultRecordViews } from '../../src/index.ts';
import { settledHistory } from '../../src/server/settled-history.ts';
import { transcriptCases } from '../transcript/transcript-cases.ts';

// The Web UI opens a session from its settled history: it must fold to exactly what the whole log folds to.
describe('settled history', () => {
  for (const testCase of transcriptCases) {
    it(`folds like the whole log: ${testCase.name}`, async () => {
      const log = await testCase.log();
      const settled = settledHistory(log);
      const whole = Transcript.of(log, { views: defaultRecordViews });
      const fromSettled = Transcript.of(settled, { views: defaultRecordViews });
      expect(fromSettled.items).toEqual(whole.items);
      expect(fromSettled.turns).toEqual(whole.turns);
      expect(fromSettled.activity).toEqual(whole.activity);
      expect(fromSettled.nextSeq).toBe(whole.nextSeq);
      expect(settled.length).toBeLessThanOrEqual(log.length);
    });
  }

  it('drops the middle chunks of answered steps and keeps the chunks of an unanswered one', async () => {
    const log = await transcriptCases[0]!.log();
    const settled = settledHistory(log);
    const chunks = (events: typeof log) => events.filter((event) => event.type === 'assistant/chunk');
    expect(chunks(settled).length).toBeLessThan(chunks(log).length);
    for (const event of settled) expect(log[event.seq]).toBe(event);
  });
});
