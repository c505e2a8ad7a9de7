import { SessionError } from '../session-error.ts';
import type { ParsedSessionLog } from './session-log-format.ts';
import {
  encodeEventLine,
  encodeHeaderLine,
  fullEnvelopeFormat,
  parseSessionLog,
} from './session-log-format.ts';

/** A session log in the disk store's JSONL text, checked for import into any store. */
export interface TransferredSessionLog extends ParsedSessionLog {
  /** The complete records as full-envelope (format 0) text: the given text itself when it was format 0. */
  text: string;
  /** The full-envelope header line, without its newline. */
  headerLine: string;
  /** The full-envelope event lines without their newlines, in seq order. */
  lines: string[];
}

/**
 * Checks a JSONL session log (as `exportLog` gives it or a disk store holds it, in either format) with
 * the disk store's own parser: the session id is taken from the header line; a corrupt record, a
 * foreign format version or an unknown required event type is refused as on load. `source` names the
 * input in errors.
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
  if (parsed.format === fullEnvelopeFormat) {
    const complete = bytes.toString('utf8', 0, parsed.completeBytes);
    const lines = complete.split('\n').slice(1, -1);
    return { ...parsed, text: complete, headerLine: complete.slice(0, complete.indexOf('\n')), lines };
  }
  const headerLine = encodeHeaderLine(parsed.header, fullEnvelopeFormat).slice(0, -1);
  const lines = parsed.events.map((event) => encodeEventLine(event).slice(0, -1));
  const body = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  return { ...parsed, text: `${headerLine}\n${body}`, headerLine, lines };
}
