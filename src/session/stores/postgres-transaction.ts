import type { Pool, PoolClient } from 'pg';
import { storeError } from './postgres-errors.ts';
import { withPooledConnection } from './postgres-connection.ts';

/**
 * Runs `run` inside one transaction on a pooled connection: committed when it resolves, rolled back when
 * it throws; every failure comes back as the store's SessionError naming `where`.
 */
export async function runInTransaction<T>(
  pool: Pool,
  where: string,
  run: (client: PoolClient) => Promise<T>,
): Promise<T> {
  try {
    return await withPooledConnection(pool, async (client, discard) => {
      await client.query('begin');
      try {
        const result = await run(client);
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {
          // The connection broke; the server rolls the transaction back on its own.
          discard();
        });
        throw error;
      }
    });
  } catch (error) {
    throw storeError(error, where);
  }
}
