import { RequestError } from '@agentclientprotocol/sdk';
import { HarnessError } from '../index.ts';

/** JSON-RPC codes ACP gives meaning to. */
const invalidParams = -32602;
const internalError = -32603;
const authRequired = -32000;
const resourceNotFound = -32002;

// Rein codes that name something the client asked for that does not exist, or credentials it must fix.
const notFoundCodes: ReadonlySet<string> = new Set(['SESSION_NOT_FOUND', 'UNKNOWN_SESSION']);
const credentialCodes: ReadonlySet<string> = new Set(['AUTH', 'INVALID_CREDENTIAL', 'MISSING_CREDENTIAL']);
// Rein codes that refuse what a prompt carries: the client sent parameters this session cannot take.
const refusedContentCodes: ReadonlySet<string> = new Set(['IMAGES_UNSUPPORTED', 'IMAGES_TOO_LARGE']);

/** An ACP protocol error carrying Rein's own code (and message) in `data`, so clients can route on it. */
export function reinRequestError(code: string, message: string, jsonRpcCode?: number): RequestError {
  return new RequestError(jsonRpcCode ?? jsonRpcCodeOf(code), message, { code, message });
}

function jsonRpcCodeOf(code: string): number {
  if (notFoundCodes.has(code)) return resourceNotFound;
  if (credentialCodes.has(code)) return authRequired;
  if (
    code.startsWith('INVALID_') ||
    code.startsWith('UNKNOWN_') ||
    code === 'WORKSPACE_MISMATCH' ||
    refusedContentCodes.has(code)
  ) {
    return invalidParams;
  }
  return internalError;
}

/** Turns anything a handler threw into the JSON-RPC error the client receives. */
export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  if (error instanceof HarnessError) return reinRequestError(error.code, error.message);
  const message = error instanceof Error ? error.message : String(error);
  return reinRequestError('UNKNOWN', message, internalError);
}

/** Runs a handler body and rethrows its failure as a protocol error. */
export async function answering<T>(body: () => Promise<T> | T): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw toRequestError(error);
  }
}
