// The analysis behind `bench:cache`: prefix stability of consecutive requests in the order a vendor
// renders a prompt for its cache, and a simulation of Anthropic's prompt cache under Rein's breakpoints.

/** A request as the loopback vendor received it. */
export interface SentBody {
  raw: string;
  body: Record<string, unknown>;
}

/** How much of one request is a byte-identical prefix of the next request of the conversation. */
export interface PrefixShare {
  /** Index of the earlier request among all requests. */
  index: number;
  /** Share of the earlier request, rendered in the vendor's cache order, that the next one repeats. */
  vendorShare: number;
  /** The same over the raw JSON bodies (field order as sent). */
  rawShare: number;
  /** A pair across a compaction, whose history was replaced on purpose. */
  exempt: boolean;
  /** Where the rendering first differs, for diagnosis. */
  difference: string;
}

/** One request of the Anthropic simulation. */
export interface CacheRead {
  index: number;
  summary: boolean;
  breakpoints: number;
  inputTokens: number;
  cachedTokens: number;
}

/**
 * The prompt as the vendor's cache sees it, one string per unit in order: for Anthropic tools →
 * system → message blocks (documented); for OpenAI-compatible vendors tools, then the messages.
 * `cache_control` markers are left out: they say where to cache, not what.
 */
export function cacheUnits(vendor: 'deepseek' | 'anthropic', body: Record<string, unknown>): string[] {
  const units: string[] = [];
  const strip = (value: unknown): string =>
    JSON.stringify(value, (key, inner: unknown) => (key === 'cache_control' ? undefined : inner));
  for (const tool of (body.tools as unknown[] | undefined) ?? []) units.push(`tool:${strip(tool)}`);
  if (vendor === 'anthropic') {
    const system = body.system;
    if (typeof system === 'string') units.push(`system:${system}`);
    else for (const block of (system as unknown[] | undefined) ?? []) units.push(`system:${strip(block)}`);
  }
  for (const message of (body.messages as { role: string; content: unknown }[] | undefined) ?? []) {
    if (Array.isArray(message.content)) {
      units.push(`role:${message.role}`);
      for (const block of message.content) units.push(strip(block));
    } else {
      units.push(strip(message));
    }
  }
  return units;
}

function commonPrefix(a: string, b: string): number {
  const limit = Math.min(a.length, b.length);
  let index = 0;
  while (index < limit && a.charCodeAt(index) === b.charCodeAt(index)) index++;
  return index;
}

/** Prefix shares of each consecutive pair of conversation requests (summary calls are a side channel). */
export function vendorPrefixShares(
  vendor: 'deepseek' | 'anthropic',
  bodies: readonly SentBody[],
  summaryIndices: readonly number[],
  isSummary: (body: unknown) => boolean,
): PrefixShare[] {
  const conversation = bodies
    .map((sent, index) => ({ ...sent, index }))
    .filter((sent) => !isSummary(sent.body));
  const shares: PrefixShare[] = [];
  for (let position = 0; position + 1 < conversation.length; position++) {
    const earlier = conversation[position]!;
    const later = conversation[position + 1]!;
    const before = cacheUnits(vendor, earlier.body).join('\n');
    const after = cacheUnits(vendor, later.body).join('\n');
    const shared = commonPrefix(before, after);
    shares.push({
      index: earlier.index,
      vendorShare: shared / before.length,
      rawShare: commonPrefix(earlier.raw, later.raw) / earlier.raw.length,
      exempt: summaryIndices.some((summary) => earlier.index < summary && later.index > summary),
      difference: JSON.stringify(before.slice(Math.max(0, shared - 40), shared + 60)),
    });
  }
  return shares;
}

const lookbackBlocks = 20;
const minimumCacheableTokens = 1024;

function tokensOf(unit: string): number {
  return Math.ceil(unit.length / 4);
}

/**
 * Simulates Anthropic's prompt cache over the requests, as documented: a request's `cache_control`
 * markers write the prefix up to each marked block; a later request reads the longest earlier-written
 * prefix that ends at one of its marked blocks or at most 20 blocks before one; prefixes under 1,024
 * tokens are not cached. Tokens are estimated at four characters each, the same for every request.
 */
export function anthropicCacheReads(
  bodies: readonly SentBody[],
  isSummary: (body: unknown) => boolean,
): CacheRead[] {
  const written = new Set<string>();
  const reads: CacheRead[] = [];
  bodies.forEach((sent, index) => {
    const units = cacheUnits('anthropic', sent.body);
    const marked = markedPositions(sent.body);
    const prefixes: string[] = [];
    const tokens: number[] = [];
    let running = '';
    let total = 0;
    for (const unit of units) {
      running += `${unit}\n`;
      total += tokensOf(unit);
      prefixes.push(running);
      tokens.push(total);
    }
    let hit = -1;
    for (const position of marked) {
      for (let back = position; back >= Math.max(0, position - lookbackBlocks); back--) {
        if (written.has(prefixes[back]!)) {
          hit = Math.max(hit, back);
          break;
        }
      }
    }
    for (const position of marked) {
      if (tokens[position]! >= minimumCacheableTokens) written.add(prefixes[position]!);
    }
    reads.push({
      index,
      summary: isSummary(sent.body),
      breakpoints: marked.length,
      inputTokens: total,
      cachedTokens: hit >= 0 ? tokens[hit]! : 0,
    });
  });
  return reads;
}

/** Unit positions (as `cacheUnits` numbers them) of the blocks that carry `cache_control`. */
function markedPositions(body: Record<string, unknown>): number[] {
  const positions: number[] = [];
  let position = 0;
  const visit = (block: unknown): void => {
    if (typeof block === 'object' && block !== null && 'cache_control' in block) positions.push(position);
    position++;
  };
  for (const tool of (body.tools as unknown[] | undefined) ?? []) visit(tool);
  const system = body.system;
  if (typeof system === 'string') position++;
  else for (const block of (system as unknown[] | undefined) ?? []) visit(block);
  for (const message of (body.messages as { content: unknown }[] | undefined) ?? []) {
    if (Array.isArray(message.content)) {
      position++; // the role unit
      for (const block of message.content) visit(block);
    } else {
      position++;
    }
  }
  return positions;
}
