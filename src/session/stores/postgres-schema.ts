import type { Pool, PoolClient } from 'pg';
import { SessionError } from '../session-error.ts';
import { compactKindTypes } from './compact-line-kinds.ts';
import { storeError } from './postgres-errors.ts';

/** The schema version this code creates and reads; a database at a newer version is refused untouched. */
export const postgresSchemaVersion = 5;

/** The oldest server (`server_version_num`) the schema's functions exist on: PostgreSQL 14. */
const minimumServerVersion = 140000;

/** The marker row that says a schema is Rein's session store. */
const product = 'rein-sessions';

/**
 * The migrations, oldest first: the one at index n takes a schema from version n to n + 1 (its SQL for
 * a schema name). Every statement is qualified with the schema name, checked to be a plain identifier.
 */
export const postgresMigrations: ReadonlyArray<(schema: string) => string> = [
  (schema) => `
    create table ${schema}.sessions (
      id text primary key,
      header text not null,
      created_at bigint not null,
      updated_at bigint not null,
      event_count bigint not null default 0
    );
    create table ${schema}.events (
      session_id text not null references ${schema}.sessions (id) on delete cascade,
      seq bigint not null,
      line text not null,
      primary key (session_id, seq)
    );
    create sequence ${schema}.fence_tokens;
    create table ${schema}.leases (
      session_id text primary key references ${schema}.sessions (id) on delete cascade,
      token bigint not null,
      holder text,
      acquired_at bigint,
      expires_at timestamptz not null
    );
    create function ${schema}.append_events(
      p_session text, p_token bigint, p_first bigint, p_lines text[], p_time bigint,
      p_lease_ms integer, p_sync boolean, p_channel text
    ) returns bigint language plpgsql as $body$
    declare
      current_token bigint;
      stored bigint;
      added bigint := coalesce(cardinality(p_lines), 0);
    begin
      if not p_sync then
        perform set_config('synchronous_commit', 'off', true);
      end if;
      -- Renewing the lease first takes its row lock: a takeover waits for this commit, or wins before it.
      update ${schema}.leases set expires_at = clock_timestamp() + p_lease_ms * interval '1 millisecond'
        where session_id = p_session and token = p_token;
      if not found then
        select token into current_token from ${schema}.leases where session_id = p_session;
        raise exception using errcode = 'RE001',
          message = format('session %s: write lease %s was taken over (now %s)', p_session, p_token,
            coalesce(current_token::text, 'none'));
      end if;
      if added > 0 then
        update ${schema}.sessions set event_count = p_first + added, updated_at = p_time
          where id = p_session and event_count = p_first;
        if not found then
          select event_count into stored from ${schema}.sessions where id = p_session;
          -- A retried batch whose first attempt committed (the reply was lost) is already there.
          if stored = p_first + added then
            return stored;
          end if;
          raise exception using errcode = 'RE002',
            message = format('session %s holds %s events, the batch starts at %s', p_session, stored, p_first);
        end if;
        insert into ${schema}.events (session_id, seq, line)
          select p_session, p_first + ordinality - 1, line
          from unnest(p_lines) with ordinality as batch (line, ordinality);
        perform pg_notify(p_channel, p_session || ' ' || (p_first + added));
      end if;
      return p_first + added;
    end
    $body$;
  `,
  // Version 2: events carry no foreign key. Every append already updates its session's row first (the
  // event count check), so no event can name a missing session; the per-row key check was the largest
  // part of the server's work per appended event. A delete removes the events itself.
  (schema) => `
    alter table ${schema}.events drop constraint if exists events_session_id_fkey;
  `,
  // Version 3: one row per committed batch instead of one per event. A row's \`lines\` is the batch's
  // exact full-envelope JSONL records, each ending in its newline (a JSON record holds none), so a
  // session's rows in \`first_seq\` order concatenate to its JSONL body. An append is one row whatever
  // its size, where a row per event cost the server an index entry and a heap tuple each (most of the
  // per-step overhead). The \`events\` view gives the per-event rows for reading by hand.
  (schema) => `
    create table ${schema}.event_batches (
      session_id text not null,
      first_seq bigint not null,
      line_count integer not null check (line_count > 0),
      lines text not null,
      primary key (session_id, first_seq)
    );
    do $migrate$ begin
      alter table ${schema}.event_batches alter column lines set compression lz4;
    exception when feature_not_supported then
      -- A server built without lz4 compresses large batches with its default (pglz).
    end $migrate$;
    insert into ${schema}.event_batches (session_id, first_seq, line_count, lines)
      select session_id, min(seq), count(*), string_agg(line || E'\\n', '' order by seq)
      from ${schema}.events group by session_id, seq / 4096;
    drop table ${schema}.events;
    create view ${schema}.events as
      select batch.session_id, batch.first_seq + record.ordinality - 1 as seq, record.line
      from ${schema}.event_batches as batch
      cross join lateral string_to_table(left(batch.lines, -1), E'\\n') with ordinality as record (line, ordinality);
    drop function ${schema}.append_events(text, bigint, bigint, text[], bigint, integer, boolean, text);
    create function ${schema}.append_events(
      p_session text, p_token bigint, p_first bigint, p_count integer, p_lines text, p_time bigint,
      p_lease_ms integer, p_sync boolean, p_channel text
    ) returns bigint language plpgsql as $body$
    declare
      current_token bigint;
      stored bigint;
    begin
      if not p_sync then
        perform set_config('synchronous_commit', 'off', true);
      end if;
      -- Renewing the lease first takes its row lock: a takeover waits for this commit, or wins before it.
      update ${schema}.leases set expires_at = clock_timestamp() + p_lease_ms * interval '1 millisecond'
        where session_id = p_session and token = p_token;
      if not found then
        select token into current_token from ${schema}.leases where session_id = p_session;
        raise exception using errcode = 'RE001',
          message = format('session %s: write lease %s was taken over (now %s)', p_session, p_token,
            coalesce(current_token::text, 'none'));
      end if;
      if p_count > 0 then
        update ${schema}.sessions set event_count = p_first + p_count, updated_at = p_time
          where id = p_session and event_count = p_first;
        if not found then
          select event_count into stored from ${schema}.sessions where id = p_session;
          -- A retried batch whose first attempt committed (the reply was lost) is already there.
          if stored = p_first + p_count then
            return stored;
          end if;
          raise exception using errcode = 'RE002',
            message = format('session %s holds %s events, the batch starts at %s', p_session, stored, p_first);
        end if;
        insert into ${schema}.event_batches (session_id, first_seq, line_count, lines)
          values (p_session, p_first, p_count, p_lines);
        perform pg_notify(p_channel, p_session || ' ' || (p_first + p_count));
      end if;
      return p_first + p_count;
    end
    $body$;
  `,
  // Version 4: a session's row records its file format, and its batch rows hold its lines in that format:
  // format 1 (compact lines, what the disk store writes) for new sessions, format 0 (full envelopes) for
  // the sessions that exist already, which keep growing in format 0 as old disk files do. A compact line
  // leans on the lines before it, so SQL cannot rebuild its envelope: the `events` view gives each
  // line's seq, the session's format, the event type (from the line's kind, its generic form's type, or a
  // full envelope's leading `type`) and the raw line. A format 1 session's snapshot (what the disk store
  // keeps in `.snapshots`, saved at release, verified against the rows by their hash) has a row in
  // `session_snapshots`, so that opening it does not parse its whole log.
  (schema) => `
    alter table ${schema}.sessions add column format smallint not null default 0
      check (format in (0, 1));
    create table ${schema}.session_snapshots (
      session_id text primary key,
      snapshot text not null
    );
    drop view ${schema}.events;
    create view ${schema}.events as
      select batch.session_id, batch.first_seq + record.ordinality - 1 as seq, session.format,
        coalesce(
          (${sqlTextArray(compactKindTypes)})[substring(record.line from '^\\[(\\d{1,4}),')::integer + 1],
          substring(record.line from '^\\["([^"\\\\]+)",'),
          substring(record.line from '^\\{"type":"([^"\\\\]+)"')
        ) as type,
        record.line
      from ${schema}.event_batches as batch
      join ${schema}.sessions as session on session.id = batch.session_id
      cross join lateral string_to_table(left(batch.lines, -1), E'\\n') with ordinality as record (line, ordinality);
  `,
  // Version 5: the session row holds the fencing token of its lease (`lease_token`), which the lease's
  // acquisition sets under the session row's lock. An append checks it in the update of the session
  // row it makes anyway, so it writes no lease row (renewal is the holder's timer, a third of the lease
  // apart), and sends its NOTIFY only when the writer asks (see `postgresNotifyIntervalMs`). The old
  // append function is dropped, not kept: a version 4 server still running would take leases without
  // setting `lease_token`, so its appends must fail rather than slip past the fence. Written to be
  // rerun safely (the advisory lock makes it run once; `if not exists`/`or replace` make a rerun idle).
  (schema) => `
    alter table ${schema}.sessions add column if not exists lease_token bigint;
    update ${schema}.sessions as session set lease_token = lease.token
      from ${schema}.leases as lease
      where lease.session_id = session.id and session.lease_token is distinct from lease.token;
    drop function if exists ${schema}.append_events(text, bigint, bigint, integer, text, bigint, integer, boolean, text);
    create or replace function ${schema}.append_events(
      p_session text, p_token bigint, p_first bigint, p_count integer, p_lines text, p_time bigint,
      p_sync boolean, p_notify boolean, p_channel text
    ) returns bigint language plpgsql as $body$
    declare
      current_token bigint;
      stored bigint;
    begin
      if not p_sync then
        perform set_config('synchronous_commit', 'off', true);
      end if;
      -- The update takes the session row's lock and checks the token under it: a takeover (which sets
      -- the token under the same lock) waits for this commit, or wins before it and this finds no row.
      if p_count > 0 then
        update ${schema}.sessions set event_count = p_first + p_count, updated_at = p_time
          where id = p_session and lease_token = p_token and event_count = p_first;
      else
        -- Nothing to add: the lock still checks the fence, and assigns the transaction the id whose
        -- commit record a synced call waits for (flushing every earlier unsynced commit).
        perform 1 from ${schema}.sessions where id = p_session and lease_token = p_token for update;
      end if;
      if not found then
        select lease_token, event_count into current_token, stored from ${schema}.sessions
          where id = p_session;
        if current_token is distinct from p_token then
          raise exception using errcode = 'RE001',
            message = format('session %s: write lease %s was taken over (now %s)', p_session, p_token,
              coalesce(current_token::text, 'none'));
        end if;
        -- A retried batch whose first attempt committed (the reply was lost) is already there.
        if stored = p_first + p_count then
          return stored;
        end if;
        raise exception using errcode = 'RE002',
          message = format('session %s holds %s events, the batch starts at %s', p_session, stored, p_first);
      end if;
      if p_count > 0 then
        insert into ${schema}.event_batches (session_id, first_seq, line_count, lines)
          values (p_session, p_first, p_count, p_lines);
      end if;
      if p_notify then
        perform pg_notify(p_channel, p_session || ' ' || (p_first + p_count));
      end if;
      return p_first + p_count;
    end
    $body$;
  `,
];

/** A SQL array literal of plain strings (no quote in them: event type names). */
function sqlTextArray(values: readonly string[]): string {
  return `array[${values.map((value) => `'${value.replaceAll("'", "''")}'`).join(', ')}]::text[]`;
}

/** A checked SQL identifier for the schema that holds Rein's tables. */
export function checkSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new SessionError(
      'STORE_URL',
      `invalid PostgreSQL schema name ${JSON.stringify(schema)}: use lowercase letters, digits and '_'`,
    );
  }
  return schema;
}

/** What `ensurePostgresSchema` found. */
export interface PostgresSchemaState {
  version: number;
  readOnly: boolean;
  /** Migrations applied by this call (0 when the schema was current). */
  migrated: number;
}

/**
 * Creates or migrates Rein's schema under a transaction-scoped advisory lock (servers starting together
 * migrate once). Refuses, without changing anything: a schema of that name holding tables that are not
 * Rein's (`STORE_FOREIGN`), a newer schema version or a server older than PostgreSQL 14
 * (`SESSION_VERSION`), and a read-only database that
 * would need a migration (`STORE_READ_ONLY`); a current schema on a read-only database is reported.
 */
export async function ensurePostgresSchema(
  pool: Pool,
  schema: string,
  where: string,
): Promise<PostgresSchemaState> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw storeError(error, where);
  }
  try {
    const readOnly =
      (await client.query<{ ro: string }>('select current_setting($1) as ro', ['transaction_read_only']))
        .rows[0]?.ro === 'on';
    const found = await currentVersion(client, schema, where);
    if (found !== undefined && found > postgresSchemaVersion) throw newerSchema(where, schema, found);
    if (found === postgresSchemaVersion) return { version: found, readOnly, migrated: 0 };
    const server = Number(
      (await client.query<{ v: string }>('select current_setting($1) as v', ['server_version_num'])).rows[0]
        ?.v,
    );
    if (server < minimumServerVersion) {
      throw new SessionError(
        'SESSION_VERSION',
        `${where} runs PostgreSQL ${Math.floor(server / 10000)}; Rein's schema needs PostgreSQL ` +
          `${minimumServerVersion / 10000} or newer (string_to_table); nothing was changed`,
      );
    }
    if (readOnly) {
      throw new SessionError(
        'STORE_READ_ONLY',
        `${where} is read-only (a replica, or default_transaction_read_only is on): Rein cannot ` +
          `${found === undefined ? 'create' : 'migrate'} its schema "${schema}" there; point REIN_STORE at the primary`,
      );
    }
    await client.query('begin');
    try {
      await client.query('select pg_advisory_xact_lock(hashtext($1))', [`rein-schema:${schema}`]);
      // Another server may have migrated while this one waited for the lock.
      const locked = await currentVersion(client, schema, where);
      if (locked !== undefined && locked > postgresSchemaVersion) throw newerSchema(where, schema, locked);
      let version = locked ?? 0;
      if (locked === undefined) {
        await client.query(`create schema if not exists ${schema}`);
        await client.query(
          `create table ${schema}.schema_version (product text not null, version integer not null, ` +
            `migrated_at timestamptz not null default now())`,
        );
        await client.query(`insert into ${schema}.schema_version (product, version) values ($1, 0)`, [
          product,
        ]);
      }
      const applied = postgresSchemaVersion - version;
      for (; version < postgresSchemaVersion; version++)
        await client.query(postgresMigrations[version]!(schema));
      await client.query(`update ${schema}.schema_version set version = $1, migrated_at = now()`, [version]);
      await client.query('commit');
      return { version, readOnly, migrated: applied };
    } catch (error) {
      await client.query('rollback').catch(() => {
        // The connection broke; the server rolls the transaction back on its own.
      });
      throw error;
    }
  } catch (error) {
    throw storeError(error, where);
  } finally {
    client.release();
  }
}

/** The stored schema version; undefined when the schema does not exist yet (or holds nothing). */
async function currentVersion(
  client: PoolClient,
  schema: string,
  where: string,
): Promise<number | undefined> {
  const tables = await client.query<{ name: string }>(
    `select table_name as name from information_schema.tables where table_schema = $1`,
    [schema],
  );
  const names = tables.rows.map((row) => row.name);
  if (names.length === 0) return undefined;
  if (!names.includes('schema_version')) throw foreign(where, schema, names);
  let rows: Array<{ product: unknown; version: unknown }>;
  try {
    rows = (await client.query(`select product, version from ${schema}.schema_version`)).rows;
  } catch (error) {
    throw new SessionError(
      'STORE_FOREIGN',
      `${where}: ${schema}.schema_version is not Rein's version table`,
      {
        cause: error,
      },
    );
  }
  const row = rows[0];
  if (rows.length !== 1 || row?.product !== product || typeof row.version !== 'number') {
    throw foreign(where, schema, names);
  }
  return row.version;
}

function foreign(where: string, schema: string, tables: readonly string[]): SessionError {
  return new SessionError(
    'STORE_FOREIGN',
    `${where}: schema "${schema}" holds tables that are not Rein's (${tables.slice(0, 5).join(', ')}); ` +
      'nothing was changed. Use another database, or another schema with ?schema=<name>',
  );
}

function newerSchema(where: string, schema: string, version: number): SessionError {
  return new SessionError(
    'SESSION_VERSION',
    `${where}: schema "${schema}" is at version ${version}, newer than this Rein's ${postgresSchemaVersion}; ` +
      'nothing was changed. Upgrade Rein to use this database',
  );
}
