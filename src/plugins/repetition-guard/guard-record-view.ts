import type { RecordView } from '../../session/index.ts';

/** How transcripts present a `guard/stopped` record. */
export const guardRecordView: RecordView<undefined> = {
  name: 'repetition-guard',
  types: ['guard/stopped'],
  initialState: undefined,
  describe(event) {
    if (event.type !== 'guard/stopped') return undefined;
    return {
      text:
        `Repetition guard stopped the turn: ${event.data.name} was called ${event.data.count} times ` +
        `with identical arguments. ${event.data.message}`,
      tone: 'stopped',
    };
  },
};
