import type { SessionStore } from '../index.ts';
import { CliError } from './cli-error.ts';

/** The shortest prefix people type is four characters; shorter ones match too much to be meant. */
const minimumPrefix = 4;

/**
 * The stored session a user means by `text`: the session with that exact id, else the only one whose
 * id starts with it (four characters at least). Several matches are an `AMBIGUOUS_SESSION_ID` error
 * naming them; no match returns `text` as it is, so the store reports its own `SESSION_NOT_FOUND`.
 */
export async function resolveSessionId(store: Pick<SessionStore, 'list'>, text: string): Promise<string> {
  const ids = (await store.list()).map((row) => row.id);
  if (ids.includes(text) || text.length < minimumPrefix) return text;
  const matches = ids.filter((id) => id.startsWith(text)).sort();
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    const shown = matches.slice(0, 5).join(', ');
    throw new CliError(
      'AMBIGUOUS_SESSION_ID',
      `'${text}' is the start of ${matches.length} session ids (${shown}${matches.length > 5 ? ', …' : ''}); type more of it`,
    );
  }
  return text;
}
