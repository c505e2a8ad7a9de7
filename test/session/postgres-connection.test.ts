import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { SessionError } from '../../src/index.ts';
import { connectPooled, withPooledConnection } from '../../src/session/stores/postgres-connection.ts';
import { connectionLostCode, isTransient, storeError } from '../../src/session/stores/postgres-errors.ts';
import { describePostgres } from '../support/postgres.ts';

/** A loopback TCP relay to the test database whose connections the test can cut, as a partition does. */
async function relayTo(url: string): Promise<{ url: string; cut: () => void; server: Server }> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => {
        // The other side was cut by the test; both are destroyed below.
      });
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relayed = new URL(url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String((server.address() as { port: number }).port);
  relayed.searchParams.delete('schema');
  return {
    url: relayed.toString(),
    server,
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describePostgres('PostgreSQL connections: a lost connection is told by its state, not its message', (url) => {
  async function relayedPool(): Promise<{ pool: pg.Pool; cut: () => void }> {
    const relay = await relayTo(url);
    const pool = new pg.Pool({ connectionString: relay.url, max: 2, connectionTimeoutMillis: 2000 });
    pool.on('error', () => {
      // Idle connections cut by the test; the pool drops them.
    });
    cleanups.push(async () => {
      await pool.end().catch(() => {
        // Already ended by a test.
      });
      await new Promise((resolve) => relay.server.close(resolve));
    });
    return { pool, cut: relay.cut };
  }

  it('a connection cut under a running query fails with REIN_CONNECTION_LOST, retryable, and is not pooled again', async () => {
    const { pool, cut } = await relayedPool();
    const running = withPooledConnection(pool, (client) => client.query('select pg_sleep(5)'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    cut();
    const failure = await running.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: connectionLostCode });
    expect(isTransient(failure)).toBe(true);
    const translated = storeError(failure, 'postgres://test');
    expect(translated).toBeInstanceOf(SessionError);
    expect(translated.code).toBe('STORE_UNREACHABLE');
    // The broken connection was destroyed: the pool opens a new one, which works.
    expect(pool.totalCount).toBe(0);
    const answer = await withPooledConnection(pool, (client) =>
      client.query<{ one: number }>('select 1 as one'),
    );
    expect(answer.rows[0]?.one).toBe(1);
  });

  it('a statement error keeps its SQLSTATE and is not retried; the connection stays pooled', async () => {
    const { pool } = await relayedPool();
    const failure = await withPooledConnection(pool, (client) => client.query('select 1/0')).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: '22012' });
    expect(isTransient(failure)).toBe(false);
    expect(pool.idleCount).toBe(1);
  });

  it('a failure of the caller, not the connection, passes through untouched and is not retryable', async () => {
    const { pool } = await relayedPool();
    const own = new TypeError('not a connection problem');
    const failure = await withPooledConnection(pool, () => Promise.reject(own)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBe(own);
    expect(isTransient(failure)).toBe(false);
    expect(pool.idleCount).toBe(1);
  });

  it('a server that accepts and then closes before the handshake: the connect fails with REIN_CONNECTION_LOST', async () => {
    const closing = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => closing.close(() => resolve())));
    const pool = new pg.Pool({
      connectionString: `postgres://rein@127.0.0.1:${(closing.address() as { port: number }).port}/rein`,
      connectionTimeoutMillis: 2000,
    });
    cleanups.push(() => pool.end());
    const failure = await connectPooled(pool).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: connectionLostCode });
    expect(isTransient(failure)).toBe(true);
  });
});
