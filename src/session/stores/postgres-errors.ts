import { SessionError } from '../session-error.ts';

/** The SQLSTATE the append function raises when the caller's fencing token is not the lease's. */
export const fencedSqlState = 'RE001';

/** The SQLSTATE the append function raises when a batch does not continue the stored log. */
export const discontinuousSqlState = 'RE002';

function fieldOf(error: unknown, name: string): unknown {
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[name] : undefined;
}

/** The SQLSTATE or system error code of a failure, if it has one. */
export function errorCodeOf(error: unknown): string | undefined {
  const code = fieldOf(error, 'code');
  return typeof code === 'string' ? code : undefined;
}

/** The code a failure carries when the connection it ran on broke or could not be opened. */
export const connectionLostCode = 'REIN_CONNECTION_LOST';

/**
 * A failure of the connection itself rather than of a statement: node-postgres reports a socket closed
 * under a query, or a connect that timed out, as an Error without a code, so the code is given where the
 * connection's own state shows what happened (postgres-connection.ts).
 */
export class ConnectionLostError extends Error {
  readonly code = connectionLostCode;

  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'ConnectionLostError';
  }
}

const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * True for a failure that a retry on a new connection may fix: the server was unreachable, restarted
 * or shut the connection (class 08, admin shutdown, starting up), the socket broke, or the connection
 * was lost under a query (`REIN_CONNECTION_LOST`, given where the connection's state shows it).
 */
export function isTransient(error: unknown): boolean {
  const code = errorCodeOf(error);
  if (code === undefined) return false;
  return (
    code === connectionLostCode ||
    networkCodes.has(code) ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03'
  );
}

/**
 * Translates a PostgreSQL or network failure into a SessionError whose code names the problem: an
 * unreachable server, refused credentials, a missing database, a read-only database; others become
 * `SESSION_IO`. `where` names the database (never the password).
 */
export function storeError(error: unknown, where: string): SessionError {
  if (error instanceof SessionError) return error;
  const code = errorCodeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === '28P01' || code === '28000') {
    return new SessionError('STORE_AUTH', `${where} refused the credentials: ${message}`, { cause: error });
  }
  if (code === '3D000') {
    return new SessionError('STORE_UNREACHABLE', `${where}: the database does not exist (${message})`, {
      cause: error,
    });
  }
  if (code === '25006') {
    return new SessionError(
      'STORE_READ_ONLY',
      `${where} is read-only (a replica, or default_transaction_read_only is on): ${message}`,
      { cause: error },
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || (code !== undefined && networkCodes.has(code))) {
    return new SessionError('STORE_UNREACHABLE', `cannot reach ${where}: ${message} (${code})`, {
      cause: error,
    });
  }
  if (isTransient(error)) {
    return new SessionError('STORE_UNREACHABLE', `${where}: the connection was lost (${message})`, {
      cause: error,
    });
  }
  return new SessionError('SESSION_IO', `${where}: ${message}${code !== undefined ? ` (${code})` : ''}`, {
    cause: error,
  });
}
