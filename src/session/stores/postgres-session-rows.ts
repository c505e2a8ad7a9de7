import { SessionError } from '../session-error.ts';
import type { Queryable } from './postgres-lease.ts';

/** A new session's rows: its header line and its first event lines (seed or imported log), verbatim. */
export interface NewSessionRows {
  id: string;
  /** The header line without its newline. */
  headerLine: string;
  createdAt: number;
  /** The time of the last event (the creation time when there is none). */
  updatedAt: number;
  /** Event lines without their newlines, seq 0 on. */
  lines: readonly string[];
}

/** Inserts a new session's rows (inside the caller's transaction); throws `SESSION_EXISTS` for an id in use. */
export async function insertSessionRows(db: Queryable, schema: string, rows: NewSessionRows): Promise<void> {
  const inserted = await db.query(
    `insert into ${schema}.sessions (id, header, created_at, updated_at, event_count)
     values ($1, $2, $3, $4, $5) on conflict (id) do nothing`,
    [rows.id, rows.headerLine, rows.createdAt, rows.updatedAt, rows.lines.length],
  );
  if (inserted.rowCount !== 1) throw new SessionError('SESSION_EXISTS', `session ${rows.id} already exists`);
  if (rows.lines.length === 0) return;
  await db.query(
    `insert into ${schema}.events (session_id, seq, line)
     select $1, ordinality - 1, line from unnest($2::text[]) with ordinality as log (line, ordinality)`,
    [rows.id, rows.lines],
  );
}

/** A stored session as JSONL text (its header line, then its event lines in seq order), or undefined. */
export async function selectSessionLogText(
  db: Queryable,
  schema: string,
  id: string,
): Promise<string | undefined> {
  const result = await db.query<{ header: string; body: string | null }>(
    `select header, (select string_agg(line, E'\\n' order by seq) from ${schema}.events
       where session_id = $1) as body
     from ${schema}.sessions where id = $1`,
    [id],
  );
  const row = result.rows[0];
  if (row === undefined) return undefined;
  return row.body === null ? `${row.header}\n` : `${row.header}\n${row.body}\n`;
}
