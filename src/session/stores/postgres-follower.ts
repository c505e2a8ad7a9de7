import type { Pool, PoolClient } from 'pg';
import type { AnySessionEvent } from '../session-event.ts';
import type { SessionFollowOptions } from '../session-store.ts';
import { CompactLogCodec } from './compact-log-codec.ts';
import { compactLogFormat, parseEventLines } from './session-log-format.ts';

interface Follower {
  readonly sessionId: string;
  /** The next seq to deliver. */
  cursor: number;
  /**
   * For a format 1 session, the decoder's state past the lines read so far (its `length` is the next
   * seq to read, from 0: a compact line leans on the lines before it); undefined until the session's
   * format is known, null for a format 0 session, whose every line stands on its own.
   */
  codec: CompactLogCodec | null | undefined;
  readonly onEvents: (events: readonly AnySessionEvent[]) => void;
  busy: boolean;
  again: boolean;
}

// Batch rows fetched per round trip while catching up.
const pageSize = 64;

/**
 * Follows stored sessions that other servers write: one LISTEN connection per store hears the commit
 * notifications the append function sends, and each follower reads the batch rows from the one holding
 * its cursor on, so events arrive in order with no gap and no duplicate even when notifications coalesce
 * or are missed (a slow poll and every reconnect catch up the same way). A format 1 session's follower
 * decodes every line from the first on (once; then only what is new), delivering from its cursor.
 */
export class PostgresFollower {
  readonly #pool: Pool;
  readonly #schema: string;
  readonly #channel: string;
  readonly #pollMs: number;
  readonly #followers = new Map<string, Set<Follower>>();
  #listener: PoolClient | undefined;
  #connecting: Promise<void> | undefined;
  #poll: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: { pool: Pool; schema: string; channel: string; pollMs?: number }) {
    this.#pool = options.pool;
    this.#schema = options.schema;
    this.#channel = options.channel;
    this.#pollMs = options.pollMs ?? 2000;
  }

  /** Delivers a session's stored events from `from` on, in seq order, until `signal` aborts. */
  follow(sessionId: string, options: SessionFollowOptions): void {
    if (this.#closed || options.signal.aborted) return;
    const follower: Follower = {
      sessionId,
      cursor: options.from,
      codec: undefined,
      onEvents: options.onEvents,
      busy: false,
      again: false,
    };
    let set = this.#followers.get(sessionId);
    if (set === undefined) this.#followers.set(sessionId, (set = new Set()));
    set.add(follower);
    options.signal.addEventListener(
      'abort',
      () => {
        set.delete(follower);
        if (set.size === 0 && this.#followers.get(sessionId) === set) this.#followers.delete(sessionId);
        if (this.#followers.size === 0) this.#stopPolling();
      },
      { once: true },
    );
    this.#startPolling();
    // The first catch-up waits for LISTEN, so that no commit falls between the read and the subscription.
    this.#ensureListening().then(
      () => this.#pull(follower),
      () => this.#pull(follower),
    );
  }

  /** Stops listening and polling; followers get nothing more. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopPolling();
    this.#followers.clear();
    const listener = this.#listener;
    this.#listener = undefined;
    if (listener !== undefined) {
      await listener.query(`unlisten ${this.#channel}`).catch(() => {
        // The connection is already gone; releasing it below is all that is left.
      });
      listener.release(true);
    }
  }

  #ensureListening(): Promise<void> {
    if (this.#listener !== undefined || this.#closed) return Promise.resolve();
    this.#connecting ??= (async () => {
      try {
        const client = await this.#pool.connect();
        client.on('notification', (message) => {
          const [sessionId] = (message.payload ?? '').split(' ', 1);
          const set = sessionId !== undefined ? this.#followers.get(sessionId) : undefined;
          if (set !== undefined) for (const follower of set) this.#pull(follower);
        });
        client.on('error', () => {
          // The server went away: drop this connection; the poll reconnects and catches everyone up.
          if (this.#listener === client) this.#listener = undefined;
          client.release(true);
        });
        await client.query(`listen ${this.#channel}`);
        if (this.#closed) {
          client.release(true);
          return;
        }
        this.#listener = client;
      } finally {
        this.#connecting = undefined;
      }
    })();
    return this.#connecting;
  }

  #startPolling(): void {
    if (this.#poll !== undefined) return;
    this.#poll = setInterval(() => {
      const wasListening = this.#listener !== undefined;
      this.#ensureListening().catch(() => {
        // Still unreachable: the next tick tries again.
      });
      if (!wasListening || this.#pollMs > 0)
        for (const set of this.#followers.values()) for (const follower of set) this.#pull(follower);
    }, this.#pollMs);
    this.#poll.unref();
  }

  #stopPolling(): void {
    if (this.#poll !== undefined) clearInterval(this.#poll);
    this.#poll = undefined;
  }

  #pull(follower: Follower): void {
    if (follower.busy) {
      follower.again = true;
      return;
    }
    follower.busy = true;
    void this.#catchUp(follower).finally(() => {
      follower.busy = false;
      if (follower.again) {
        follower.again = false;
        this.#pull(follower);
      }
    });
  }

  async #catchUp(follower: Follower): Promise<void> {
    for (;;) {
      if (!this.#followers.get(follower.sessionId)?.has(follower)) return;
      let rows: Array<{ first: string; lines: string }>;
      try {
        if (follower.codec === undefined) {
          const session = (
            await this.#pool.query<{ format: number; created: string }>(
              `select format, created_at::text as created from ${this.#schema}.sessions where id = $1`,
              [follower.sessionId],
            )
          ).rows[0];
          // Not created yet (or deleted): the next notification or poll looks again.
          if (session === undefined) return;
          follower.codec =
            session.format === compactLogFormat ? new CompactLogCodec(Number(session.created)) : null;
        }
        // Where the next line to read is: the cursor, or for compact lines the decoder's position.
        const next = follower.codec === null ? follower.cursor : follower.codec.length;
        // From the batch that holds it (found by the key, not by scanning the session's batches).
        rows = (
          await this.#pool.query<{ first: string; lines: string }>(
            `select first_seq::text as first, lines from ${this.#schema}.event_batches
             where session_id = $1 and first_seq >= coalesce((select max(first_seq)
               from ${this.#schema}.event_batches where session_id = $1 and first_seq <= $2), 0)
             order by first_seq limit ${pageSize}`,
            [follower.sessionId, next],
          )
        ).rows;
      } catch {
        // The database is unreachable for now: the next notification or poll catches up from the cursor.
        return;
      }
      const events = this.#decode(follower, rows);
      if (events === undefined) return;
      if (events.length > 0) {
        follower.cursor += events.length;
        follower.onEvents(events);
      }
      if (rows.length < pageSize) return;
    }
  }

  /**
   * The events of `rows` from the follower's cursor on, in seq order up to the first gap; undefined
   * when a bad line stops the follower (reading the session reports it with its line and offset).
   */
  #decode(
    follower: Follower,
    rows: ReadonlyArray<{ first: string; lines: string }>,
  ): AnySessionEvent[] | undefined {
    const events: AnySessionEvent[] = [];
    const codec = follower.codec ?? undefined;
    for (const row of rows) {
      const first = Number(row.first);
      // The next seq this follower reads: a compact session's rows are read whole, in order.
      const next = codec?.length ?? follower.cursor + events.length;
      if (first > next) break;
      if (codec !== undefined && first !== next) continue;
      const bytes = Buffer.from(row.lines, 'utf8');
      // A full-envelope row is entered at the cursor's line, skipping the lines before it.
      let start = 0;
      for (let seq = first; seq < next && start >= 0; seq++) {
        const end = bytes.indexOf(0x0a, start);
        start = end < 0 ? -1 : end + 1;
      }
      // The whole row precedes the cursor (a follower at the end of the log).
      if (start < 0) continue;
      let parsed: ReturnType<typeof parseEventLines>;
      try {
        parsed = parseEventLines(bytes, {
          start,
          end: bytes.length,
          codec,
          firstSeq: next,
          firstLine: next + 2,
          context: { id: follower.sessionId, path: this.#schema, salvage: true },
        });
      } catch {
        // A required event type this Rein does not know: reading the session names it; the follow stops.
        this.#stop(follower);
        return events.length > 0 ? events : undefined;
      }
      for (const event of parsed.events)
        if (event.seq === follower.cursor + events.length) events.push(Object.freeze(event));
      if (parsed.corrupt !== undefined) {
        this.#stop(follower);
        return events.length > 0 ? events : undefined;
      }
    }
    return events;
  }

  #stop(follower: Follower): void {
    const set = this.#followers.get(follower.sessionId);
    set?.delete(follower);
    if (set?.size === 0) this.#followers.delete(follower.sessionId);
  }
}
