import { SessionError } from '../session-error.ts';
import type { ParsedSessionLog } from './session-log-format.ts';
import { parseSessionLog } from './session-log-format.ts';

/** A session log in the disk store's JSONL text, checked for import into any store. */
export interface TransferredSessionLog extends ParsedSessionLog {
  /** The complete records exactly as given (a torn final line dropped). */
  text: string;
  /** The event lines without their newlines, in seq order. */
  lines: string[];
}

/**
 * Checks a JSONL session log (as `exportLog` gives it or a disk store holds it) with the disk store's
 * own parser: the session id is taken from the header line; a corrupt record, a foreign format version
 * or an unknown required event type is refused as on load. `source` names the input in errors.
 */
export function parseTransferredLog(text: string, source: string): TransferredSessionLog {
  const headerEnd = text.indexOf('\n');
  let id: unknown;
  try {
    id = (JSON.parse(headerEnd < 0 ? text : text.slice(0, headerEnd)) as { id?: unknown }).id;
  } catch {
    id = undefined;
  }
  if (typeof id !== 'string') {
    throw new SessionError('SESSION_CORRUPT', `${source} is not a Rein session log (bad header line)`);
  }
  const bytes = Buffer.from(text, 'utf8');
  const parsed = parseSessionLog(bytes, { id, path: source });
  const complete = bytes.toString('utf8', 0, parsed.completeBytes);
  const lines = complete.split('\n').slice(1, -1);
  return { ...parsed, text: complete, lines };
}
