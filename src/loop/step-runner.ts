import type { Agent, AgentOptions, Inbox } from '../agent/index.ts';
import type { HookBus } from '../hooks/index.ts';
import type {
  AssistantMessage,
  LlmCallConfig,
  LlmFailure,
  LlmRequest,
  LlmService,
  PreparedRoute,
  RetryPolicy,
  ToolCallBlock,
} from '../llm/index.ts';
import {
  BlockAssembler,
  HarnessError,
  LlmError,
  createAssistantMessage,
  forEachChunk,
  snapshotJson,
} from '../llm/index.ts';
import type { Session } from '../session/index.ts';
import { appendBuilt, appendChunk, assistantMessageData, checkpointDone } from '../session/index.ts';
import type { ToolRegistry } from '../tools/index.ts';
import { throwIfAborted } from './agent-aborted-error.ts';
import { RequestEnvelope } from './request-envelope.ts';
import { SeqRanges } from './seq-ranges.ts';
import type { ToolScheduler } from './tool-scheduler.ts';

/** How a step ended: the model's work is done (with a turn outcome), tools owe a request, or the request failed. */
export type StepResult =
  | { kind: 'completed' }
  | { kind: 'max-tokens' }
  | { kind: 'continue' }
  | {
      kind: 'failed';
      failure: LlmFailure;
      provider: string;
      model: string;
      retryPolicy: RetryPolicy | undefined;
    };

/** Runs one step: builds the request, streams it into the log, assembles the reply and schedules its tools. */
export class StepRunner {
  readonly #agent: Agent;
  readonly #options: Readonly<AgentOptions>;
  readonly #session: Session;
  readonly #inbox: Inbox;
  readonly #hooks: HookBus;
  readonly #llm: LlmService;
  readonly #tools: ToolRegistry;
  readonly #scheduler: ToolScheduler;
  readonly #maxParallel: number;
  readonly #envelope: RequestEnvelope;
  #lastConfig: LlmCallConfig | undefined;
  #source: AssistantMessage['source'] | undefined;

  constructor(options: {
    agent: Agent;
    session: Session;
    inbox: Inbox;
    hooks: HookBus;
    llm: LlmService;
    tools: ToolRegistry;
    scheduler: ToolScheduler;
    maxParallel: number;
  }) {
    this.#agent = options.agent;
    this.#options = options.agent.options;
    this.#session = options.session;
    this.#inbox = options.inbox;
    this.#hooks = options.hooks;
    this.#llm = options.llm;
    this.#tools = options.tools;
    this.#scheduler = options.scheduler;
    this.#maxParallel = options.maxParallel;
    this.#envelope = new RequestEnvelope(options.session);
  }

  /** Runs one step of turn `turn`; throws for failures before dispatch and for cancellation. */
  async run(turn: number, step: number, system: string, signal: AbortSignal): Promise<StepResult> {
    throwIfAborted(signal);
    const session = this.#session;
    // The history snapshot is taken at the start of the attempt, before `agent/request` runs.
    const messages = session.derivedMessages();
    const seed = this.#seedConfig();
    const hooks = this.#hooks;
    // Without a listener the seed is the config: no payload, no chain, no extra tick.
    let config = seed;
    if (hooks.hears('agent/request', this.#agent.id)) {
      config = await hooks.waterfall(
        'agent/request',
        { agent: this.#agent, turn, step, signal },
        () => seed,
        this.#agent.id,
      );
      throwIfAborted(signal);
    }
    if (
      typeof config?.provider !== 'string' ||
      config.provider === '' ||
      typeof config.model !== 'string' ||
      config.model === ''
    ) {
      throw new HarnessError(
        'NO_ROUTE',
        'the agent has no provider/model: set AgentOptions.provider and AgentOptions.model, or route it in agent/request',
      );
    }
    let route: PreparedRoute | undefined;
    try {
      route = this.#llm.prepare(config);
    } catch (error) {
      // NO_ADAPTER is tolerated: an llm/stream listener may still serve this route.
      if (!(error instanceof LlmError) || error.code !== 'NO_ADAPTER') throw error;
    }
    const prepared = route?.config ?? config;
    // Later requests seed from what `agent/request` chose, not from adapter-completed defaults. The seed
    // is handed to listeners, so it is frozen (a listener's own answer is copied once, not every step).
    this.#lastConfig = Object.isFrozen(config) ? config : Object.freeze({ ...config });
    const tools = this.#tools.schemas(this.#options.tools, this.#agent.id);
    this.#envelope.record(prepared, route, system, tools);
    const request: LlmRequest = { ...prepared, messages, sessionId: session.id, purpose: 'turn' };
    if (system !== '') request.system = system;
    if (tools.length > 0) request.tools = tools;
    Object.freeze(request);
    const persistent = session.persistent;
    let durable: Promise<void> | undefined;
    if (persistent) {
      // A log known to be broken ends the turn before the request goes out. Otherwise the request (it
      // has no side effect) is sent while the log's checkpoint runs; the step looks at the checkpoint's
      // outcome once the answer is in, before anything else happens.
      const broken = session.checkpointFailure;
      if (broken !== undefined) throw broken;
      const pending = session.checkpoint('request', signal);
      // A request checkpoint usually has nothing to wait for (its sync, if any, runs in the background).
      if (pending !== checkpointDone) {
        durable = pending;
        durable.catch(() => {
          // Awaited below once the stream is consumed; a step that fails earlier reports its own error.
        });
      }
    }
    const stream = await this.#llm.stream(request, { signal, route, scope: this.#agent.id });
    const assembler = new BlockAssembler();
    const chunkSeqs = new SeqRanges();
    const source = this.#sourceOf(prepared.provider, prepared.model);
    try {
      await forEachChunk(stream, (chunk) => {
        throwIfAborted(signal);
        chunkSeqs.push(appendChunk(session, turn, step, chunk).seq);
        assembler.push(chunk);
      });
      throwIfAborted(signal);
      if (persistent) {
        if (durable !== undefined) await durable;
        // A background write or sync that failed while the answer streamed ends the turn here.
        const broken = session.checkpointFailure;
        if (broken !== undefined) throw broken;
      }
    } catch (error) {
      if (signal.aborted) {
        const prefix = assembler.interruptedPrefix();
        if (prefix.length > 0) {
          const usage = assembler.usage;
          session.append(
            'assistant/message',
            {
              turn,
              step,
              message: createAssistantMessage(prefix, source),
              interrupted: true,
              ...(usage !== undefined ? { usage } : {}),
            },
            { surfaceOp: 'append', sourceEventSeqs: chunkSeqs.toArray(), adopt: true },
          );
        }
      }
      throw error;
    }
    const response = assembler.result();
    const finish = response.finish;
    if (finish.kind === 'error' || finish.kind === 'aborted') {
      // A failed attempt may still have been billed (a refusal after output): its usage is kept.
      const usage = response.usage;
      session.append(
        'request/failed',
        usage !== undefined
          ? { turn, step, failure: finish.failure, usage, provider: prepared.provider, model: prepared.model }
          : { turn, step, failure: finish.failure },
        { adopt: true },
      );
      return {
        kind: 'failed',
        failure: finish.failure,
        provider: prepared.provider,
        model: prepared.model,
        retryPolicy: route?.retryPolicy,
      };
    }
    const replay = response.replayState;
    const message = createAssistantMessage(
      response.content,
      replay !== undefined ? { ...source, replayState: replay } : source,
    );
    const usage = response.usage;
    const messageOptions = {
      surfaceOp: 'append',
      sourceEventSeqs: Object.freeze(chunkSeqs.toArray()),
      adopt: true,
    } as const;
    const built = assistantMessageData(turn, step, message, usage);
    if (built !== undefined) appendBuilt(session, 'assistant/message', built, messageOptions);
    else
      session.append(
        'assistant/message',
        usage !== undefined ? { turn, step, message, usage } : { turn, step, message },
        messageOptions,
      );
    if (finish.kind === 'max-tokens') return { kind: 'max-tokens' };
    const calls = message.content.filter((block): block is ToolCallBlock => block.type === 'tool-call');
    if (calls.length === 0) return { kind: 'completed' };
    const concluded = await this.#scheduler.run({
      calls,
      session,
      inbox: this.#inbox,
      turn,
      step,
      signal,
      selection: this.#options.tools,
      maxParallel: this.#maxParallel,
    });
    return concluded ? { kind: 'completed' } : { kind: 'continue' };
  }

  /** The source of this route's assistant messages: one snapshot per route, shared by its messages. */
  #sourceOf(provider: string, model: string): AssistantMessage['source'] {
    const cached = this.#source;
    if (cached !== undefined && cached.provider === provider && cached.model === model) return cached;
    return (this.#source = snapshotJson({ kind: 'model', provider, model }));
  }

  /**
   * The config `agent/request` starts from: this driver's previous choice; on its first request, the
   * agent's options, falling back to the latest logged route (so a resumed session keeps its model).
   */
  #seedConfig(): Readonly<LlmCallConfig> {
    if (this.#lastConfig !== undefined) return this.#lastConfig;
    const logged = this.#envelope.lastConfig;
    const options = this.#options;
    const provider = options.provider ?? logged?.provider ?? '';
    const model = options.model ?? logged?.model ?? '';
    const config: LlmCallConfig = { provider, model };
    const sameRoute = logged !== undefined && logged.provider === provider && logged.model === model;
    const effort = options.reasoningEffort ?? (sameRoute ? logged.reasoningEffort : undefined);
    if (effort !== undefined) config.reasoningEffort = effort;
    if (options.temperature !== undefined) config.temperature = options.temperature;
    if (options.maxTokens !== undefined) config.maxTokens = options.maxTokens;
    return Object.freeze(config);
  }
}
