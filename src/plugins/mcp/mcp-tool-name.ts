import { createHash } from 'node:crypto';

const maxLength = 64;

function sanitize(text: string): string {
  const cleaned = text.replace(/[^a-zA-Z0-9_-]/g, '_');
  return cleaned === '' ? '_' : cleaned;
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * The Rein name of an MCP tool: `mcp__<server>__<tool>` with every character outside `[a-zA-Z0-9_-]`
 * replaced by `_`, at most 64 characters (a longer one keeps its head and ends in a hash of the full
 * original name), and unique against `taken` (a clash gets a hash suffix too).
 */
export function mcpToolName(server: string, tool: string, taken: (name: string) => boolean): string {
  const original = `${server}\u0000${tool}`;
  const full = `mcp__${sanitize(server)}__${sanitize(tool)}`;
  if (full.length <= maxLength && !taken(full)) return full;
  for (let attempt = 0; ; attempt++) {
    const suffix = `_${shortHash(attempt === 0 ? original : `${original}\u0000${attempt}`)}`;
    const candidate = `${full.slice(0, maxLength - suffix.length)}${suffix}`;
    if (!taken(candidate)) return candidate;
  }
}

/** The permission-rule pattern that matches every tool of one server: `mcp__<server>__*`. */
export function mcpServerToolPattern(server: string): string {
  return `mcp__${sanitize(server)}__*`;
}
