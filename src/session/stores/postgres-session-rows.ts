import { SessionError } from '../session-error.ts';
import type { Queryable } from './postgres-lease.ts';
import type { SessionLogFormat } from './session-log-format.ts';

/** A new session's rows: its header line and its first event lines (seed or imported log), verbatim. */
export interface NewSessionRows {
  id: string;
  /** The format of the header line and of every event line (what the session keeps appending in). */
  format: SessionLogFormat;
  /** The header line without its newline. */
  headerLine: string;
  createdAt: number;
  /** The time of the last event (the creation time when there is none). */
  updatedAt: number;
  /** Event lines without their newlines, seq 0 on. */
  lines: readonly string[];
}

// An imported log is stored in batches of at most this many lines (a row each).
const linesPerBatch = 4096;

/**
 * The text of one stored batch row from its lines (without newlines): every line followed by a
 * newline, as in a JSONL file (no JSON record contains one), so a session's rows concatenate to its log
 * body in the session's format.
 */
export function batchText(lines: readonly string[]): string {
  return `${lines.join('\n')}\n`;
}

/** Inserts a new session's rows (inside the caller's transaction); throws `SESSION_EXISTS` for an id in use. */
export async function insertSessionRows(db: Queryable, schema: string, rows: NewSessionRows): Promise<void> {
  const inserted = await db.query(
    `insert into ${schema}.sessions (id, header, created_at, updated_at, event_count, format)
     values ($1, $2, $3, $4, $5, $6) on conflict (id) do nothing`,
    [rows.id, rows.headerLine, rows.createdAt, rows.updatedAt, rows.lines.length, rows.format],
  );
  if (inserted.rowCount !== 1) throw new SessionError('SESSION_EXISTS', `session ${rows.id} already exists`);
  for (let first = 0; first < rows.lines.length; first += linesPerBatch) {
    const batch = rows.lines.slice(first, first + linesPerBatch);
    await db.query(
      `insert into ${schema}.event_batches (session_id, first_seq, line_count, lines) values ($1, $2, $3, $4)`,
      [rows.id, first, batch.length, batchText(batch)],
    );
  }
}

/** A stored session's log: the format its row records, and its text as the disk store's file would hold it. */
export interface StoredSessionLogText {
  format: number;
  /** The header line, then the event lines in seq order, each ending in its newline. */
  text: string;
}

/** A stored session's log text and recorded format, or undefined when there is no such session. */
export async function selectSessionLogText(
  db: Queryable,
  schema: string,
  id: string,
): Promise<StoredSessionLogText | undefined> {
  // One statement (one consistent view of the rows), a result row per batch: the client joins them, so
  // no multi-megabyte text is assembled on the server and received as one protocol message.
  const result = await db.query<{ header: string; format: number; lines: string | null }>(
    `select session.header, session.format, batch.lines from ${schema}.sessions as session
     left join ${schema}.event_batches as batch on batch.session_id = session.id
     where session.id = $1 order by batch.first_seq`,
    [id],
  );
  const first = result.rows[0];
  if (first === undefined) return undefined;
  let body = '';
  for (const row of result.rows) if (row.lines !== null) body += row.lines;
  return { format: first.format, text: `${first.header}\n${body}` };
}
