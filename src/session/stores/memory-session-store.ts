import type { HookBus } from '../../hooks/index.ts';
import { Session } from '../session.ts';
import type { SessionHeader } from '../session.ts';
import { SessionError } from '../session-error.ts';
import type { AnySessionEvent } from '../session-event.ts';
import type { PricingLookup, SessionForkOptions, SessionStore, SessionSummary } from '../session-store.ts';
import { forkStoredSession } from '../session-fork.ts';
import { summarizeSession } from '../session-summary.ts';
import { repairInterruptedTail } from '../crash-repair.ts';

interface Entry {
  header: SessionHeader;
  /** The session that last held the log (live or released): its events are the stored log. */
  log: Session;
  live: Session | undefined;
}

/** A session store that keeps every log in memory, for tests and embedding; nothing survives the process. */
export class MemorySessionStore implements SessionStore {
  readonly #entries = new Map<string, Entry>();
  readonly #pricing: PricingLookup | undefined;
  #hooks: HookBus | undefined;

  constructor(options: { pricing?: PricingLookup } = {}) {
    this.#pricing = options.pricing;
  }

  /** Attaches the hook bus live sessions publish on. */
  bind(hooks: HookBus): void {
    this.#hooks = hooks;
  }

  async create(
    header: Omit<SessionHeader, 'version' | 'createdAt'> & { createdAt?: number },
    options: { seed?: readonly AnySessionEvent[] } = {},
  ): Promise<Session> {
    await Promise.resolve();
    if (this.#entries.has(header.id))
      throw new SessionError('SESSION_EXISTS', `session ${header.id} already exists`);
    const fullHeader: SessionHeader = { ...header, version: 0, createdAt: header.createdAt ?? Date.now() };
    if (options.seed !== undefined) fullHeader.seedLength = options.seed.length;
    const session = this.#construct(fullHeader, options.seed);
    this.#entries.set(header.id, { header: fullHeader, log: session, live: session });
    return session;
  }

  async open(id: string): Promise<Session> {
    await Promise.resolve();
    const entry = this.#entry(id);
    if (entry.live !== undefined && !entry.live.closed) {
      throw new SessionError('SESSION_LOCKED', `session ${id} is already open for writing in this process`);
    }
    const repaired = repairInterruptedTail(entry.log.events);
    const session = this.#construct({ ...entry.header }, repaired);
    entry.live = session;
    entry.log = session;
    return session;
  }

  async read(id: string): Promise<{ header: SessionHeader; events: AnySessionEvent[] }> {
    await Promise.resolve();
    const entry = this.#entry(id);
    return { header: { ...entry.header }, events: [...entry.log.events] };
  }

  async list(): Promise<SessionSummary[]> {
    await Promise.resolve();
    return [...this.#entries.values()]
      .map((entry) => summarizeSession(entry.header, entry.log.events, this.#pricing))
      .sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async delete(id: string): Promise<void> {
    await Promise.resolve();
    const entry = this.#entry(id);
    if (entry.live !== undefined && !entry.live.closed) {
      throw new SessionError('SESSION_LOCKED', `session ${id} is open; dispose its agent first`);
    }
    this.#entries.delete(id);
  }

  async fork(id: string, options: SessionForkOptions = {}): Promise<SessionHeader> {
    await Promise.resolve();
    const entry = this.#entry(id);
    const held = entry.live !== undefined && !entry.live.closed;
    return forkStoredSession(this, { parent: entry.header, events: entry.log.events, held }, options);
  }

  async release(session: Session): Promise<void> {
    await Promise.resolve();
    const entry = this.#entries.get(session.id);
    session.close();
    if (entry?.live === session) entry.live = undefined;
  }

  #construct(header: SessionHeader, seed: readonly AnySessionEvent[] | undefined): Session {
    const options: ConstructorParameters<typeof Session>[0] = { header };
    if (this.#hooks !== undefined) options.hooks = this.#hooks;
    if (seed !== undefined) options.seed = seed;
    return new Session(options);
  }

  #entry(id: string): Entry {
    const entry = this.#entries.get(id);
    if (entry === undefined) throw new SessionError('SESSION_NOT_FOUND', `no session ${id}`);
    return entry;
  }
}
