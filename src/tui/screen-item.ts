import type { TranscriptItem } from '../index.ts';

/** A line the TUI shows that is not part of the session's log (help, command results, warnings). */
export interface LocalNotice {
  readonly kind: 'local';
  readonly key: string;
  readonly text: string;
  readonly tone: 'info' | 'error';
}

/** What the transcript viewport lists: the session's transcript items and local notices, in order. */
export type ScreenItem = TranscriptItem | LocalNotice;
