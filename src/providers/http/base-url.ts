import { LlmError } from '../../llm/index.ts';

/** The default idle timeout of a streaming call: silence longer than this fails it with `TIMEOUT`. */
export const defaultIdleTimeoutMs = 120_000;

/** Checks an http(s) base URL and drops trailing slashes; throws INVALID_REQUEST naming the provider. */
export function validBaseUrl(baseUrl: string, provider: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new LlmError({
      code: 'INVALID_REQUEST',
      message: `${provider}: base URL '${baseUrl}' is not a URL`,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new LlmError({
      code: 'INVALID_REQUEST',
      message: `${provider}: base URL '${baseUrl}' must be http(s)`,
    });
  }
  return baseUrl.replace(/\/+$/, '');
}
