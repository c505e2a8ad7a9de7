import type { AgentContext, SessionUpdate, StopReason } from '@agentclientprotocol/sdk';
import { methods } from '@agentclientprotocol/sdk';
import type {
  Agent,
  AnySessionEvent,
  ContentBlock,
  Disposer,
  EpochHeader,
  ReinHarness,
  TurnEndReason,
} from '../internal.ts';
import { createUserMessage, pricingLookup } from '../internal.ts';
import { reinRequestError } from './acp-errors.ts';
import { SessionUpdates } from './session-updates.ts';

/** A provider/model pair. */
export interface Route {
  provider: string;
  model: string;
}

/** The ACP stop reason of a turn's end; a failed turn becomes a protocol error with Rein's code. */
export function stopReasonOf(reason: TurnEndReason): StopReason {
  switch (reason.kind) {
    case 'completed':
      return 'end_turn';
    case 'max-tokens':
      return 'max_tokens';
    case 'blocked':
      return 'max_turn_requests';
    case 'aborted':
    case 'interrupted':
      return 'cancelled';
    case 'error':
      if (reason.error.code === 'CONTENT_FILTER') return 'refusal';
      throw reinRequestError(reason.error.code, reason.error.message);
  }
}

/**
 * One editor session over one live Rein agent: streams its durable events as `session/update`s, turns a
 * prompt into one `followup` turn and answers with its stop reason, cancels, and keeps the model route.
 */
export class AcpSession {
  readonly agent: Agent;
  readonly harness: ReinHarness;
  readonly #client: AgentContext;
  readonly #updates: SessionUpdates;
  readonly #disposers: Disposer[] = [];
  #route: Route | undefined;
  #sent: Promise<void> = Promise.resolve();
  #pending: { kind: 'agent_message_chunk' | 'agent_thought_chunk'; text: string } | undefined;
  #flushScheduled = false;
  #closed = false;

  constructor(harness: ReinHarness, agent: Agent, client: AgentContext) {
    this.harness = harness;
    this.agent = agent;
    this.#client = client;
    this.#updates = new SessionUpdates(
      {
        cwd: agent.options.cwd ?? agent.session.header.cwd ?? harness.cwd,
        tool: (name) => harness.tools.get(name),
        pricing: pricingLookup(harness.llm),
      },
      agent.session.events,
    );
    const scope = { scope: agent.id };
    const hooks = harness.hooks;
    this.#disposers.push(
      hooks.on('session/event', ({ event }) => this.#forward(event), scope),
      // Reaching execution means the call was allowed: the card turns to running.
      hooks.on(
        'tools/execute',
        (payload, next) => {
          if (this.#updates.presentation(payload.call.callId) !== undefined) {
            this.send(this.#updates.started(payload.call.callId));
          }
          return next();
        },
        scope,
      ),
      hooks.on(
        'agent/request',
        async (_payload, next) => {
          const config = await next();
          const route = this.#route;
          if (route === undefined || (route.provider === config.provider && route.model === config.model)) {
            return config;
          }
          // A different model gets its own defaults: effort ids and token caps do not carry across models.
          const { reasoningEffort: _effort, maxTokens: _maxTokens, ...rest } = config;
          return { ...rest, provider: route.provider, model: route.model };
        },
        scope,
      ),
    );
  }

  /** The session id (the agent's). */
  get id(): string {
    return this.agent.id;
  }

  /** The translation state of the live stream (tool cards of calls still running). */
  get updates(): SessionUpdates {
    return this.#updates;
  }

  /** The route the next request uses: the override, else the latest request header, else the options. */
  get route(): Route {
    if (this.#route !== undefined) return this.#route;
    const log = this.agent.session.log;
    for (let index = log.length - 1; index >= 0; index--) {
      if (log.typeAt(index) !== 'request/header') continue;
      const { provider, model } = (log.at(index)!.data as { header: EpochHeader }).header.config;
      return { provider, model };
    }
    const { provider, model } = this.agent.options;
    return provider !== undefined && model !== undefined ? { provider, model } : this.harness.route;
  }

  /** Switches the model of the next requests (checked against the configured providers). */
  setRoute(route: Route): void {
    this.harness.assertRoute(route);
    this.#route = route;
  }

  /**
   * Sends one update to the client, in order after every earlier one. Text chunks of one kind that
   * arrive within one turn of the event loop go out as one chunk (a burst of deltas is one message,
   * a lone delta leaves at once).
   */
  send(update: SessionUpdate): void {
    if (this.#closed) return;
    if (
      (update.sessionUpdate === 'agent_message_chunk' || update.sessionUpdate === 'agent_thought_chunk') &&
      update.content.type === 'text'
    ) {
      if (this.#pending?.kind === update.sessionUpdate) {
        this.#pending.text += update.content.text;
        return;
      }
      this.#flushPending();
      this.#pending = { kind: update.sessionUpdate, text: update.content.text };
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(() => {
          this.#flushScheduled = false;
          this.#flushPending();
        });
      }
      return;
    }
    this.#flushPending();
    this.#notify(update);
  }

  /** Resolves once every update sent so far was handed to the transport. */
  flushed(): Promise<void> {
    this.#flushPending();
    return this.#sent;
  }

  #flushPending(): void {
    const pending = this.#pending;
    if (pending === undefined) return;
    this.#pending = undefined;
    this.#notify({ sessionUpdate: pending.kind, content: { type: 'text', text: pending.text } });
  }

  #notify(update: SessionUpdate): void {
    if (this.#closed) return;
    const sent = this.#client.notify(methods.client.session.update, { sessionId: this.id, update });
    this.#sent = sent.catch((error: unknown) => {
      // A closed connection loses its updates; the log keeps everything.
      process.stderr.write(`rein acp: could not send an update: ${String(error)}\n`);
    });
  }

  /**
   * Queues the prompt as a `followup` and resolves the stop reason of the turn that takes it; cancelled
   * when the request is cancelled or the message is discarded before a turn takes it.
   */
  async prompt(content: readonly ContentBlock[], signal: AbortSignal): Promise<StopReason> {
    if (this.agent.disposed) throw reinRequestError('AGENT_DISPOSED', `session ${this.id} is closed`);
    const scope = { scope: this.id };
    const hooks = this.harness.hooks;
    const disposers: Disposer[] = [];
    try {
      const ended = new Promise<TurnEndReason | 'discarded'>((resolve) => {
        let turn: number | undefined;
        // The id is known before queuing: the driver may claim the message synchronously inside followup.
        const message = createUserMessage([...content]);
        const messageId = message.id;
        disposers.push(
          hooks.on(
            'agent/inbox/claimed',
            (payload) => {
              if (payload.message.id === messageId) turn = payload.turn;
            },
            scope,
          ),
          hooks.on(
            'agent/inbox/discarded',
            (payload) => {
              if (payload.message.id === messageId) resolve('discarded');
            },
            scope,
          ),
          hooks.on(
            'session/event',
            ({ event }) => {
              if (event.type !== 'turn/end' || turn === undefined) return;
              const data = event.data as { turn: number; reason: TurnEndReason };
              if (data.turn === turn) resolve(data.reason);
            },
            scope,
          ),
        );
        this.agent.followup(message);
      });
      const onAbort = (): void => this.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
      disposers.push(() => signal.removeEventListener('abort', onAbort));
      const reason = await ended;
      // The answer acknowledges the prompt: the turn that took it is durable in the log first.
      await this.agent.session.checkpoint('flush');
      await this.flushed();
      return reason === 'discarded' ? 'cancelled' : stopReasonOf(reason);
    } finally {
      for (const dispose of disposers.splice(0).reverse()) dispose();
    }
  }

  /** `session/cancel`: cancels the running turn with the user's cause (every call still gets its result). */
  cancel(): void {
    this.agent.cancel({ kind: 'user' });
  }

  /** Stops streaming and disposes the agent (the log stays resumable). */
  async close(): Promise<void> {
    this.#flushPending();
    this.#closed = true;
    for (const dispose of this.#disposers.splice(0).reverse()) dispose();
    await this.agent.dispose();
  }

  #forward(event: AnySessionEvent): void {
    for (const update of this.#updates.translate(event)) this.send(update);
  }
}
