import type { ServerResponse } from 'node:http';
import type {
  Agent,
  AnySessionEvent,
  ApprovalRequest,
  Disposer,
  EpochHeader,
  Harness,
  ReadonlySessionLog,
  SavedLogScan,
  SessionHeader,
  UserMessage,
} from '../index.ts';
import { EventStreamClient } from './event-stream-client.ts';
import type { LogView } from './event-stream-client.ts';

/** A provider and model pair. */
export interface ModelRoute {
  provider: string;
  model: string;
  /** The effort (a level or a thinking budget) chosen with the model; unset: the model's default. */
  reasoningEffort?: string;
}

/** The live state of a session as the UI sees it (sent on connect, on resync, and piecewise when it changes). */
export interface SessionLiveState {
  sessionId: string;
  live: boolean;
  status: 'idle' | 'running';
  inbox: { nextTurn: UserMessage[]; nextStep: UserMessage[] };
  approvals: ApprovalRequest[];
  model: ModelRoute | undefined;
  length: number;
}

/** Options of the hub. */
export interface SessionHubOptions {
  /** Live events a slow client may owe before they collapse into a resync. */
  liveLimit?: number;
  heartbeatMs?: number;
  /** How long an approver stays attached after the last browser of a session disconnected (reloads). */
  approverGraceMs?: number;
}

const requestHeaderType: ReadonlySet<string> = new Set(['request/header']);

interface Channel {
  readonly clients: Set<EventStreamClient>;
  stored: readonly AnySessionEvent[] | ReadonlySessionLog | undefined;
  /** The header read with `stored` (a session's header does not change). */
  header?: SessionHeader;
  /** The log scans' states the store saved with `stored` (its snapshot's), by scan name. */
  scans?: Readonly<Record<string, SavedLogScan>>;
  approver: Disposer | undefined;
  graceTimer: NodeJS.Timeout | undefined;
  /** Ends the store-level follow of a session another server writes (a shared store). */
  follow: AbortController | undefined;
}

/**
 * Connects browsers to sessions: one event stream per browser tab (durable log replay, then live), the
 * session's approver while a browser is connected, and the per-session model override.
 */
export class SessionHub {
  readonly #harness: Harness;
  readonly #channels = new Map<string, Channel>();
  // Stored reads under way, shared by the requests that need the same session meanwhile.
  readonly #opening = new Map<string, Promise<Channel>>();
  readonly #routes = new Map<string, ModelRoute>();
  readonly #disposers: Disposer[] = [];
  readonly #liveLimit: number;
  readonly #heartbeatMs: number;
  readonly #graceMs: number;

  constructor(harness: Harness, options: SessionHubOptions = {}) {
    this.#harness = harness;
    this.#liveLimit = options.liveLimit ?? 512;
    this.#heartbeatMs = options.heartbeatMs ?? 15_000;
    this.#graceMs = options.approverGraceMs ?? 15_000;
    const hooks = harness.hooks;
    this.#disposers.push(
      hooks.on('session/event', ({ session, event }) => {
        const channel = this.#channels.get(session.id);
        if (channel === undefined) return;
        for (const client of channel.clients) client.notifyLog();
        if (event.type === 'tool/approval-decided') this.#broadcastApprovals(session.id);
      }),
      hooks.on('agent/status', ({ agent, status }) => this.#broadcast(agent.id, 'status', { status })),
      hooks.on('agent/inbox/inserted', ({ agent }) => this.#broadcastInbox(agent)),
      hooks.on('agent/inbox/discarded', ({ agent }) => this.#broadcastInbox(agent)),
      hooks.on('agent/inbox/claimed', ({ agent }) => this.#broadcastInbox(agent)),
      hooks.on('agent/created', ({ agent }) => {
        const channel = this.#channels.get(agent.id);
        if (channel === undefined) return;
        this.#unfollow(channel);
        channel.stored = undefined;
        this.#broadcast(agent.id, 'state', this.state(agent.id));
      }),
      hooks.on('agent/disposed', ({ agent }) => {
        this.#routes.delete(agent.id);
        const channel = this.#channels.get(agent.id);
        if (channel === undefined) return;
        // The log the clients read must outlive the agent: its log object (packed, not copied) and its
        // header become the stored view.
        channel.stored = agent.session.log;
        channel.header = agent.session.header;
        // Another server may continue the session now: its appends reach this one through the store.
        this.#follow(agent.id, channel);
        this.#broadcast(agent.id, 'state', this.state(agent.id));
      }),
      hooks.on('agent/request', async ({ agent }, next) => {
        const config = await next();
        const route = this.#routes.get(agent.id);
        if (route === undefined) return config;
        const chosen = route.reasoningEffort !== undefined ? { reasoningEffort: route.reasoningEffort } : {};
        if (route.provider === config.provider && route.model === config.model) {
          return route.reasoningEffort === undefined || route.reasoningEffort === config.reasoningEffort
            ? config
            : { ...config, ...chosen };
        }
        // A different model gets its own defaults (effort ids and token caps do not carry across
        // models), unless the user chose an effort with it.
        const { reasoningEffort: _effort, maxTokens: _maxTokens, ...rest } = config;
        return { ...rest, provider: route.provider, model: route.model, ...chosen };
      }),
    );
  }

  /** Switches the model a live session's next requests use. */
  setRoute(sessionId: string, route: ModelRoute): void {
    this.#routes.set(sessionId, route);
    this.#broadcast(sessionId, 'state', this.state(sessionId));
  }

  /** The model a session uses: the override, else its latest request header, else its options. */
  routeOf(sessionId: string): ModelRoute | undefined {
    const override = this.#routes.get(sessionId);
    if (override !== undefined) return override;
    const agent = this.#harness.agents.get(sessionId);
    const log = this.#log(sessionId);
    // A session log (live, or stored from a snapshot) finds it without building the events it skips.
    let index = log.length - 1;
    if ('previousOfType' in log)
      index = (log as ReadonlySessionLog).previousOfType(requestHeaderType, log.length);
    else while (index >= 0 && log.at(index)?.type !== 'request/header') index--;
    if (index >= 0) {
      const { provider, model, reasoningEffort } = (log.at(index)!.data as { header: EpochHeader }).header
        .config;
      return reasoningEffort !== undefined ? { provider, model, reasoningEffort } : { provider, model };
    }
    if (agent?.options.provider !== undefined && agent.options.model !== undefined) {
      return { provider: agent.options.provider, model: agent.options.model };
    }
    return undefined;
  }

  /** The live state of a session. */
  state(sessionId: string): SessionLiveState {
    const agent = this.#harness.agents.get(sessionId);
    return {
      sessionId,
      live: agent !== undefined,
      status: agent?.status ?? 'idle',
      inbox: {
        nextTurn: agent?.inbox.list('next-turn') ?? [],
        nextStep: agent?.inbox.list('next-step') ?? [],
      },
      approvals: this.#harness.approvals.pending(sessionId),
      model: this.routeOf(sessionId),
      length: this.#log(sessionId).length,
    };
  }

  /**
   * Streams a session to one browser: `hello` with the live state, the durable events from `from`
   * (SSE id = seq), then live durable and state events as they happen.
   */
  async attach(
    sessionId: string,
    response: ServerResponse,
    from: number,
    options: { batch?: boolean; deltaRuns?: boolean } = {},
  ): Promise<EventStreamClient> {
    const owner = this.#channels.get(sessionId) ?? (await this.#openChannel(sessionId));
    const client: EventStreamClient = new EventStreamClient(response, {
      from,
      source: () => this.#log(sessionId),
      snapshot: () => this.state(sessionId),
      liveLimit: this.#liveLimit,
      heartbeatMs: this.#heartbeatMs,
      batch: options.batch === true,
      deltaRuns: options.deltaRuns === true,
      onClose: () => this.#detach(sessionId, owner, client),
    });
    owner.clients.add(client);
    this.#ensureApprover(sessionId, owner);
    client.pushLive('hello', this.state(sessionId));
    return client;
  }

  /**
   * The events of a session from `from` on: the live log, or the stored one. A stored log is read once
   * and shared with the streams that follow (a browser fetches the history, then opens its stream);
   * without a stream it is kept for the grace period, like an approver.
   */
  async events(sessionId: string, from: number): Promise<readonly AnySessionEvent[]> {
    const agent = this.#harness.agents.get(sessionId);
    if (agent !== undefined) return agent.session.log.slice(from);
    const channel = this.#channels.get(sessionId) ?? (await this.#openChannel(sessionId));
    const agentNow = this.#harness.agents.get(sessionId);
    if (agentNow !== undefined) return agentNow.session.log.slice(from);
    // A channel a write made before its agent was created has no stored view: the store has the log.
    const stored = channel.stored ?? (await this.#harness.store.read(sessionId)).events;
    return stored.slice(from);
  }

  /**
   * The log of a session as the hub holds it, not a copy: the live log, or the stored one it shares with
   * the streams (the same object for as long as it is kept, so what is derived from it can be kept too).
   */
  async log(sessionId: string): Promise<ReadonlySessionLog | readonly AnySessionEvent[]> {
    const agent = this.#harness.agents.get(sessionId);
    if (agent !== undefined) return agent.session.log;
    const channel = this.#channels.get(sessionId) ?? (await this.#openChannel(sessionId));
    const agentNow = this.#harness.agents.get(sessionId);
    if (agentNow !== undefined) return agentNow.session.log;
    return channel.stored ?? (await this.#harness.store.read(sessionId)).events;
  }

  /**
   * What the log scan `name` had derived from a prefix of a session's log when the store saved it: the
   * state the live session resumed with, or the one read with the stored log the hub holds.
   */
  savedScan(sessionId: string, name: string): SavedLogScan | undefined {
    const agent = this.#harness.agents.get(sessionId);
    if (agent !== undefined) return agent.session.scans.restored(name);
    return this.#channels.get(sessionId)?.scans?.[name];
  }

  /** A session's header: the live one, the one read with a stored log a browser has open, or the store's. */
  async header(sessionId: string): Promise<SessionHeader> {
    const agent = this.#harness.agents.get(sessionId);
    if (agent !== undefined) return agent.session.header;
    return this.#channels.get(sessionId)?.header ?? (await this.#harness.store.read(sessionId)).header;
  }

  /**
   * Makes sure a session's stream can be attached: for a session no agent runs here, its stored log is
   * read now (SESSION_NOT_FOUND when there is none), so a refusal comes before any stream bytes.
   */
  async prepare(sessionId: string): Promise<void> {
    if (this.#harness.agents.has(sessionId) || this.#channels.get(sessionId)?.stored !== undefined) return;
    if (this.#channels.has(sessionId)) await this.#harness.store.read(sessionId);
    else await this.#openChannel(sessionId);
  }

  /**
   * Keeps the session's approver attached for the grace period: a browser that just created or wrote to
   * a session is there, even before its event stream connects.
   */
  keepApprover(sessionId: string): void {
    let channel = this.#channels.get(sessionId);
    if (channel === undefined) {
      channel = {
        clients: new Set(),
        stored: undefined,
        approver: undefined,
        graceTimer: undefined,
        follow: undefined,
      };
      this.#channels.set(sessionId, channel);
    }
    this.#ensureApprover(sessionId, channel);
    if (channel.clients.size === 0) this.#startGrace(sessionId, channel);
  }

  /** Ends every stream of a session (it was deleted). */
  closeSession(sessionId: string, reason: string): void {
    const channel = this.#channels.get(sessionId);
    if (channel === undefined) return;
    this.#unfollow(channel);
    for (const client of [...channel.clients]) client.end('closed', { reason });
    // What was read of it is gone with it: the next request asks the store (and learns it is gone).
    channel.stored = undefined;
    delete channel.header;
  }

  /** Ends every stream, detaches every approver and listener. */
  dispose(): void {
    for (const [sessionId, channel] of this.#channels) {
      for (const client of [...channel.clients]) client.end('closed', { reason: 'server stopping' });
      this.#unfollow(channel);
      this.#dropApprover(channel);
      this.#channels.delete(sessionId);
    }
    for (const dispose of this.#disposers.splice(0)) dispose();
  }

  /** The session's channel, created with its stored log read once when no agent runs it. */
  async #openChannel(sessionId: string): Promise<Channel> {
    const pending = this.#opening.get(sessionId);
    if (pending !== undefined) return pending;
    const reading = this.#readChannel(sessionId);
    this.#opening.set(sessionId, reading);
    const settled = (): void => {
      if (this.#opening.get(sessionId) === reading) this.#opening.delete(sessionId);
    };
    // The requests awaiting `reading` get its error; this only forgets it.
    reading.then(settled, settled);
    return reading;
  }

  async #readChannel(sessionId: string): Promise<Channel> {
    const read = this.#harness.agents.has(sessionId) ? undefined : await this.#readStored(sessionId);
    // Another request may have created the channel while the store was read.
    let channel = this.#channels.get(sessionId);
    if (channel === undefined) {
      channel = {
        clients: new Set(),
        stored: read?.events,
        ...(read !== undefined ? { header: read.header, scans: read.scans } : {}),
        approver: undefined,
        graceTimer: undefined,
        follow: undefined,
      };
      this.#channels.set(sessionId, channel);
      this.#follow(sessionId, channel);
      // Kept for a stream that follows (attaching stops the timer), dropped when none does.
      this.#startGrace(sessionId, channel);
    }
    return channel;
  }

  // A store that can read a log from its snapshot decodes only the events asked for (a history page's).
  async #readStored(sessionId: string): Promise<{
    header: SessionHeader;
    events: readonly AnySessionEvent[] | ReadonlySessionLog;
    scans: Readonly<Record<string, SavedLogScan>>;
  }> {
    const store = this.#harness.store;
    if (store.readLog !== undefined) {
      const { header, log, scans } = await store.readLog(sessionId);
      return { header, events: log, scans };
    }
    const { header, events } = await store.read(sessionId);
    return { header, events, scans: {} };
  }

  #log(sessionId: string): LogView {
    const agent = this.#harness.agents.get(sessionId);
    if (agent !== undefined) return agent.session.log;
    return this.#channels.get(sessionId)?.stored ?? [];
  }

  /**
   * Streams the stored events of a session this server does not run (another server sharing the store
   * writes it) into the channel's stored view: in seq order from its end, each once.
   */
  #follow(sessionId: string, channel: Channel): void {
    const store = this.#harness.store;
    if (store.follow === undefined || channel.follow !== undefined || channel.stored === undefined) return;
    const events = [...channel.stored];
    channel.stored = events;
    const controller = new AbortController();
    channel.follow = controller;
    store.follow(sessionId, {
      from: events.length,
      signal: controller.signal,
      onEvents: (batch) => {
        if (channel.stored !== events || controller.signal.aborted) return;
        events.push(...batch);
        for (const client of channel.clients) client.notifyLog();
      },
    });
  }

  #unfollow(channel: Channel): void {
    channel.follow?.abort();
    channel.follow = undefined;
  }

  #detach(sessionId: string, channel: Channel, client: EventStreamClient): void {
    channel.clients.delete(client);
    if (channel.clients.size > 0) return;
    this.#startGrace(sessionId, channel);
  }

  #startGrace(sessionId: string, channel: Channel): void {
    clearTimeout(channel.graceTimer);
    channel.graceTimer = setTimeout(() => {
      if (channel.clients.size > 0) return;
      this.#dropApprover(channel);
      this.#unfollow(channel);
      if (this.#channels.get(sessionId) === channel) this.#channels.delete(sessionId);
    }, this.#graceMs);
    channel.graceTimer.unref();
  }

  #ensureApprover(sessionId: string, channel: Channel): void {
    clearTimeout(channel.graceTimer);
    channel.graceTimer = undefined;
    if (channel.approver !== undefined) return;
    channel.approver = this.#harness.approvals.attach({
      sessionId,
      // The browser answers through the API; the dialog opens from the pending list pushed here.
      notify: () => {
        this.#broadcastApprovals(sessionId);
      },
    });
  }

  #dropApprover(channel: Channel): void {
    clearTimeout(channel.graceTimer);
    channel.graceTimer = undefined;
    channel.approver?.();
    channel.approver = undefined;
  }

  #broadcastInbox(agent: Agent): void {
    this.#broadcast(agent.id, 'inbox', {
      nextTurn: agent.inbox.list('next-turn'),
      nextStep: agent.inbox.list('next-step'),
    });
  }

  #broadcastApprovals(sessionId: string): void {
    this.#broadcast(sessionId, 'approvals', { approvals: this.#harness.approvals.pending(sessionId) });
  }

  #broadcast(sessionId: string, event: string, data: unknown): void {
    const channel = this.#channels.get(sessionId);
    if (channel === undefined) return;
    for (const client of channel.clients) client.pushLive(event, data);
  }
}
