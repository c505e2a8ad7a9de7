import type {
  Agent,
  AnySessionEvent,
  Disposer,
  InboxTarget,
  LlmAdapter,
  MessageInput,
  ModelRoute,
  PermissionMode,
  ReinHarness,
  SessionSummary,
  TranscriptItem,
} from '../internal.ts';
import {
  HarnessError,
  Transcript,
  Workspace,
  createReinHarness,
  defaultRecordViews,
  parseModelRoute,
} from '../internal.ts';
import { TuiApprover } from './tui-approver.ts';

/** How a chat opens: the workspace, the environment, and which session. */
export interface ChatOpenOptions {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly model?: string;
  readonly approve?: PermissionMode;
  /** Resume this stored session. */
  readonly resumeId?: string;
  /** Resume the latest session of the workspace. */
  readonly continueLatest?: boolean;
  /** Rein's home; `REIN_HOME` or `~/.rein` when omitted. */
  readonly home?: string;
  /** Extra model adapters (an embedding app's own, a benchmark's scripted one). */
  readonly providers?: readonly LlmAdapter[];
}

/** What the screen is told after something changed. */
export interface ChatListener {
  /** Transcript items that were added or changed (possibly none: status, inbox or approvals changed). */
  changed(items: readonly TranscriptItem[]): void;
  /** The session was swapped (fork, resume, new, a different approval mode): everything is new. */
  replaced(): void;
}

/**
 * One open chat: the application harness, the agent of the session on screen, its transcript (the SDK's
 * fold of the durable log, fed live from `session/event`), the TUI approver and the model override.
 * Swapping sessions or approval modes keeps this object and replaces what it holds.
 */
export class ChatSession {
  harness!: ReinHarness;
  agent!: Agent;
  transcript!: Transcript;
  workspace!: Workspace;
  readonly approver: TuiApprover;
  /** The model the next requests use when the user picked one with /model. */
  route: ModelRoute | undefined;
  /** When the latest retry wait ends (ms since the epoch), while one is pending. */
  retryUntil: number | undefined;
  readonly #options: ChatOpenOptions;
  readonly #listener: ChatListener;
  #disposers: Disposer[] = [];
  #mode: PermissionMode;

  private constructor(options: ChatOpenOptions, listener: ChatListener) {
    this.#options = options;
    this.#listener = listener;
    this.#mode = options.approve ?? 'ask';
    this.approver = new TuiApprover(() => listener.changed([]));
  }

  /**
   * Opens the harness and the session the options name (new, `--resume`, `--continue`). A stored
   * session is first read without taking it and folded, and `onPreview` gets that transcript to show
   * while the session is opened for writing (crash repair, lock); the live events then continue it.
   */
  static async open(
    options: ChatOpenOptions,
    listener: ChatListener,
    onPreview?: (transcript: Transcript, id: string) => void,
  ): Promise<ChatSession> {
    const chat = new ChatSession(options, listener);
    chat.harness = await chat.#createHarness(chat.#mode);
    try {
      let id = options.resumeId;
      if (id === undefined && options.continueLatest === true) {
        id = (await chat.sessions())[0]?.id;
        if (id === undefined) {
          throw new HarnessError(
            'NO_SESSION',
            `no session to continue in ${options.cwd}; start one with 'rein'`,
          );
        }
      }
      const preview = id !== undefined && onPreview !== undefined ? await chat.#preview(id) : undefined;
      if (preview !== undefined) onPreview?.(preview, id!);
      const agent =
        id !== undefined ? await chat.harness.resumeAgent(id, chat.#routeOptions()) : await chat.#newAgent();
      chat.#attach(agent, preview);
    } catch (error) {
      await chat.harness.dispose();
      throw error;
    }
    return chat;
  }

  /** The approval mode the policy enforces. */
  get mode(): PermissionMode {
    return this.#mode;
  }

  /** The route the next request will use: the /model choice, the log's latest, else the default. */
  get currentRoute(): ModelRoute {
    if (this.route !== undefined) return this.route;
    const log = this.agent.session.log;
    for (let index = log.length - 1; index >= 0; index--) {
      if (log.typeAt(index) !== 'request/context') continue;
      const data = log.at(index)!.data as { provider: string; model: string };
      return { provider: data.provider, model: data.model };
    }
    if (this.agent.options.provider !== undefined && this.agent.options.model !== undefined) {
      return { provider: this.agent.options.provider, model: this.agent.options.model };
    }
    return this.harness.route;
  }

  /** Whether the model of the next request accepts images. */
  acceptsImages(): boolean {
    try {
      return this.harness.llm.prepare(this.currentRoute).model?.images === true;
    } catch {
      // A route that no longer prepares takes nothing.
      return false;
    }
  }

  /** The size limit of one image (base64 characters) of the model of the next request, if it has one. */
  imageBytes(): number | undefined {
    try {
      return this.harness.llm.prepare(this.currentRoute).model?.imageBytes;
    } catch {
      // A route that no longer prepares takes no images at all; acceptsImages says so.
      return undefined;
    }
  }

  /**
   * Sends a prompt: `next-step` steers the running turn, `next-turn` queues (or starts) a turn. Resolves
   * once the message is durable in the session log; rejects with `CHECKPOINT_FAILED` when it cannot be.
   */
  async send(message: MessageInput, target: InboxTarget): Promise<void> {
    if (target === 'next-step' && this.agent.status === 'running') this.agent.steer(message);
    else this.agent.followup(message);
    await this.agent.session.checkpoint('flush');
  }

  /** Cancels the running turn as the user, keeping what is queued. */
  cancel(): void {
    this.agent.cancel({ kind: 'user' }, { keepInbox: true });
  }

  /** Switches the model of the next requests; throws HarnessError for an unknown provider or model. */
  setModel(text: string): ModelRoute {
    const route = parseModelRoute(text);
    this.harness.assertRoute(route);
    this.route = route;
    this.#listener.changed([]);
    return route;
  }

  /** The models the configured providers offer, as `provider/model`. */
  models(): string[] {
    const models: string[] = [];
    for (const provider of this.harness.llm.providers()) {
      const adapter = this.harness.llm.adapter(provider);
      for (const model of adapter?.listModels?.() ?? []) models.push(`${provider}/${model}`);
    }
    return models;
  }

  /** The top-level sessions of this workspace, newest first. */
  async sessions(): Promise<SessionSummary[]> {
    const rows = (await this.harness.store.list())
      .filter((row) => row.cwd === this.harness.cwd && row.parentSession === undefined)
      .sort((a, b) => b.updatedAt - a.updatedAt);
    return rows;
  }

  /** Closes the session on screen and opens another stored one. */
  async resume(id: string): Promise<void> {
    await this.#swap(async () => this.harness.resumeAgent(id, this.#routeOptions()));
  }

  /** Starts a new session in the same workspace. */
  async startNew(): Promise<void> {
    await this.#swap(async () => this.#newAgent());
  }

  /** Forks the session on screen at its last closed turn and continues in the fork; returns its id. */
  async fork(): Promise<string> {
    this.#assertIdle('fork');
    await this.agent.session.checkpoint('flush');
    const header = await this.harness.store.fork(this.agent.id);
    await this.resume(header.id);
    return header.id;
  }

  /** Reopens the harness with another approval mode and resumes the same session in it. */
  async setMode(mode: PermissionMode): Promise<void> {
    this.#assertIdle('change the approval mode');
    const id = this.agent.id;
    this.#detach();
    await this.agent.dispose();
    await this.harness.dispose();
    this.#mode = mode;
    this.harness = await this.#createHarness(mode);
    this.#attach(await this.harness.resumeAgent(id, this.#routeOptions()));
    this.#listener.replaced();
  }

  /** Flushes the log and releases everything; the session stays resumable. */
  async close(): Promise<void> {
    this.#detach();
    try {
      await this.agent.dispose();
    } finally {
      await this.harness.dispose();
    }
  }

  #assertIdle(what: string): void {
    if (this.agent.status !== 'idle') {
      throw new HarnessError('AGENT_BUSY', `cannot ${what} while a turn runs; press Esc to stop it first`);
    }
  }

  async #swap(open: () => Promise<Agent>): Promise<void> {
    this.#assertIdle('switch sessions');
    this.#detach();
    await this.agent.dispose();
    this.route = undefined;
    this.#attach(await open());
    this.#listener.replaced();
  }

  async #preview(id: string): Promise<Transcript | undefined> {
    try {
      return Transcript.of((await this.harness.store.read(id)).events, { views: defaultRecordViews });
    } catch {
      // A log that does not read as it is (a torn tail) is shown once opening has repaired it.
      return undefined;
    }
  }

  #routeOptions(): { provider?: string; model?: string } {
    if (this.#options.model === undefined) return {};
    const route = parseModelRoute(this.#options.model);
    return { provider: route.provider, model: route.model };
  }

  async #newAgent(): Promise<Agent> {
    return this.harness.createAgent({ cwd: this.harness.cwd, ...this.#routeOptions() });
  }

  async #createHarness(mode: PermissionMode): Promise<ReinHarness> {
    const harness = await createReinHarness({
      cwd: this.#options.cwd,
      env: this.#options.env,
      approve: mode,
      ...(this.#options.model !== undefined ? { model: this.#options.model } : {}),
      ...(this.#options.home !== undefined ? { home: this.#options.home } : {}),
      ...(this.#options.providers !== undefined ? { providers: this.#options.providers } : {}),
    });
    this.workspace = new Workspace({ root: harness.cwd, reinHome: harness.home });
    return harness;
  }

  #attach(agent: Agent, folded?: Transcript): void {
    this.agent = agent;
    // A transcript folded from the stored log goes on from its next seq (the repair's closers included).
    this.transcript = folded ?? new Transcript({ views: defaultRecordViews });
    const log = agent.session.log;
    for (let seq = this.transcript.nextSeq; seq < log.length; seq++) this.transcript.apply(log.at(seq)!);
    const hooks = this.harness.hooks;
    const scope = { scope: agent.id };
    const changed = (items: readonly TranscriptItem[]): void => this.#listener.changed(items);
    this.#disposers = [
      hooks.on('session/event', ({ event }) => this.#observe(event), scope),
      hooks.on('agent/status', () => changed([]), scope),
      hooks.on('agent/inbox/inserted', () => changed([]), scope),
      hooks.on('agent/inbox/discarded', () => changed([]), scope),
      hooks.on('agent/inbox/claimed', () => changed([]), scope),
      hooks.on(
        'agent/request',
        async (_payload, next) => {
          const config = await next();
          const route = this.route;
          if (route === undefined || (route.provider === config.provider && route.model === config.model)) {
            return config;
          }
          // Effort ids and token caps belong to the model they were set for.
          const { reasoningEffort: _effort, maxTokens: _maxTokens, ...rest } = config;
          return { ...rest, provider: route.provider, model: route.model };
        },
        scope,
      ),
      this.harness.approvals.attach(this.approver),
    ];
  }

  #observe(event: AnySessionEvent): void {
    const touched = this.transcript.apply(event);
    if (touched === undefined) return;
    for (const item of touched) {
      if (item.kind === 'retry' && item.seq === event.seq) this.retryUntil = event.time + item.delayMs;
    }
    if (event.type === 'step/start' || event.type === 'turn/end') this.retryUntil = undefined;
    this.#listener.changed(touched);
  }

  #detach(): void {
    for (const dispose of this.#disposers.splice(0)) dispose();
  }
}
