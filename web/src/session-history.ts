import { api } from './api.ts';
import { Transcript, defaultRecordViews } from './sdk.ts';
import type { TranscriptCarry } from './sdk.ts';
import type { LogEvent } from './types.ts';

// Events a history page covers at least (the server cuts at the turn boundary before them).
export const historyPageEvents = 1500;

/** One page of history as the server answers it (`GET /events?tail=…`). */
export interface HistoryPage {
  readonly events: LogEvent[];
  readonly carry: TranscriptCarry;
  readonly start: number;
  readonly end: number;
}

/** The last turns of a session, or the turns before `before`. */
export function fetchHistoryPage(sessionId: string, before?: number): Promise<HistoryPage> {
  const query = `tail=${historyPageEvents}${before !== undefined ? `&before=${before}` : ''}`;
  return api<HistoryPage>('GET', `/api/sessions/${encodeURIComponent(sessionId)}/events?${query}`);
}

/** The transcript of one page: the fold goes on from the page's carry over its events. */
export function foldHistoryPage(page: HistoryPage): Transcript {
  const transcript = new Transcript({ views: defaultRecordViews, carry: page.carry });
  for (const event of page.events) transcript.apply(event);
  return transcript;
}

/**
 * Loads the turns before a transcript's start and puts them in front of it, one page at a time: a call
 * while a page is on its way waits for that one instead of asking again. Resolves with how many items
 * were added (0 when the transcript already starts at seq 0 or the session changed meanwhile).
 */
export class EarlierHistory {
  readonly #sessionId: string;
  readonly #transcript: () => Transcript;
  #loading: Promise<number> | undefined;

  constructor(sessionId: string, transcript: () => Transcript) {
    this.#sessionId = sessionId;
    this.#transcript = transcript;
  }

  /** Whether the transcript lacks earlier turns the server has. */
  get hasEarlier(): boolean {
    return this.#transcript().startSeq > 0;
  }

  /** Fetches and folds the page before the transcript's start; `beforePrepend` runs just before it is added. */
  load(beforePrepend: (added: number) => void): Promise<number> {
    this.#loading ??= this.#load(beforePrepend).finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  async #load(beforePrepend: (added: number) => void): Promise<number> {
    const transcript = this.#transcript();
    const start = transcript.startSeq;
    if (start === 0) return 0;
    const page = foldHistoryPage(await fetchHistoryPage(this.#sessionId, start));
    // The session was switched (or reopened) while the page was on its way.
    if (this.#transcript() !== transcript || transcript.startSeq !== start) return 0;
    const added = page.items.length;
    beforePrepend(added);
    transcript.prepend(page);
    return added;
  }
}
