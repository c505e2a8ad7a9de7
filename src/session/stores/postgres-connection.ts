import type { Pool, PoolClient } from 'pg';
import { ConnectionLostError, errorCodeOf } from './postgres-errors.ts';

/** Opens a pooled connection; a failure without a code of its own becomes a ConnectionLostError. */
export async function connectPooled(pool: Pool): Promise<PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    throw errorCodeOf(error) === undefined ? new ConnectionLostError(error) : error;
  }
}

/**
 * Runs `run` on one pooled connection and releases it: a failure without a code, raised after the
 * connection reported an error of its own (its socket ended or broke), becomes a ConnectionLostError; such
 * a connection, or one `run` discards (a transaction it could not roll back), is destroyed, not pooled.
 */
export async function withPooledConnection<T>(
  pool: Pool,
  run: (client: PoolClient, discard: () => void) => Promise<T>,
): Promise<T> {
  const client = await connectPooled(pool);
  let lost = false;
  // node-postgres emits `error` on the client synchronously, before it fails the queries in flight.
  const onError = (): void => {
    lost = true;
  };
  let discarded = false;
  const discard = (): void => {
    discarded = true;
  };
  client.on('error', onError);
  try {
    return await run(client, discard);
  } catch (error) {
    if (lost && errorCodeOf(error) === undefined) throw new ConnectionLostError(error);
    throw error;
  } finally {
    client.off('error', onError);
    client.release(lost || discarded);
  }
}
