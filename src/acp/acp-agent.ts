import { realpath } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type {
  AgentApp,
  AgentContext,
  ClientCapabilities,
  InitializeResponse,
  ListSessionsResponse,
  McpServer,
  PermissionOption,
  RequestPermissionResponse,
  SessionInfo,
} from '@agentclientprotocol/sdk';
import { PROTOCOL_VERSION, agent as agentApp, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import type {
  ApprovalDecision,
  ApprovalRequest,
  McpServerDefinition,
  PermissionMode,
  ReinHarness,
  SessionStore,
} from '../internal.ts';
import {
  DiskSessionStore,
  createReinHarness,
  defaultRouteTakesImages,
  pricingLookup,
  reinSessionsDirectory,
  reinWarningLine,
  resolveReinHome,
} from '../internal.ts';
import { answering, reinRequestError } from './acp-errors.ts';
import { AcpSession } from './acp-session.ts';
import { clientFiles } from './client-files.ts';
import { clientMcpServers } from './client-mcp-servers.ts';
import { promptAcceptance, promptContent } from './prompt-content.ts';
import { replayUpdates } from './session-updates.ts';
import { applyConfigOption, applyMode, configOptions, modeState } from './session-options.ts';
import { presentToolCall } from './tool-presentation.ts';

/** Options of `serveAcp`. */
export interface AcpAgentOptions {
  /** The client's messages (the process's stdin). */
  input: ReadableStream<Uint8Array>;
  /** Where protocol messages go (the process's stdout) — nothing else is ever written there. */
  output: WritableStream<Uint8Array>;
  /** The environment keys and `REIN_HOME` are read from. */
  env: Readonly<Record<string, string | undefined>>;
  /** The default route as `provider/model`. */
  model?: string;
  /** The default approval mode of new sessions. */
  approve?: PermissionMode;
  /** Rein's version, reported in `initialize`. */
  version: string;
  /** Diagnostics (stderr); never the protocol stream. */
  log: (line: string) => void;
}

/** The authentication method that re-reads provider keys from the environment and Rein's config. */
export const reloadKeysMethod = 'rein-provider-keys';

const permissionOptions: PermissionOption[] = [
  { optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'allow-session', name: 'Allow for this session', kind: 'allow_always' },
  { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
  { optionId: 'deny-session', name: 'Deny for this session', kind: 'reject_always' },
];

const listPageSize = 100;

/**
 * Rein as an ACP agent: one harness per workspace the client opens sessions in, one live agent per
 * session, approvals as `session/request_permission`, the client's files for the file tools.
 */
export class ReinAcpAgent {
  readonly #options: AcpAgentOptions;
  readonly #harnesses = new Map<string, Promise<ReinHarness>>();
  readonly #sessions = new Map<string, AcpSession>();
  #client: AgentContext | undefined;
  #capabilities: ClientCapabilities = {};
  #listStore: SessionStore | undefined;

  constructor(options: AcpAgentOptions) {
    this.#options = options;
  }

  /** The ACP app with every handler Rein implements. */
  app(): AgentApp {
    return agentApp({ name: 'rein' })
      .onConnect((connection) => {
        this.#client = connection.client;
      })
      .onRequest(methods.agent.initialize, async ({ params }) => {
        this.#capabilities = params.clientCapabilities ?? {};
        return this.#initialize(
          await defaultRouteTakesImages({ model: this.#options.model, env: this.#options.env }),
        );
      })
      .onRequest(methods.agent.authenticate, ({ params }) =>
        answering(async () => {
          if (params.methodId !== reloadKeysMethod) {
            throw reinRequestError('INVALID_AUTH_METHOD', `no authentication method '${params.methodId}'`);
          }
          for (const harness of this.#harnesses.values()) await (await harness).reloadProviders();
          return {};
        }),
      )
      .onRequest(methods.agent.session.new, ({ params }) =>
        answering(async () => {
          const servers = clientMcpServers(params.mcpServers);
          const harness = await this.#workspace(params.cwd);
          const agent = await harness.createAgent({ cwd: harness.cwd });
          const session = this.#adopt(harness, agent);
          await this.#attachServers(session, servers);
          return { sessionId: session.id, modes: modeState(session), configOptions: configOptions(session) };
        }),
      )
      .onRequest(methods.agent.session.load, ({ params }) =>
        answering(async () => {
          const session = await this.#open(params.sessionId, params.cwd, params.mcpServers);
          await this.#replay(session);
          return { modes: modeState(session), configOptions: configOptions(session) };
        }),
      )
      .onRequest(methods.agent.session.resume, ({ params }) =>
        answering(async () => {
          const session = await this.#open(params.sessionId, params.cwd, params.mcpServers ?? []);
          return { modes: modeState(session), configOptions: configOptions(session) };
        }),
      )
      .onRequest(methods.agent.session.list, ({ params }) =>
        answering(() => this.#list(params.cwd ?? undefined, params.cursor ?? undefined)),
      )
      .onRequest(methods.agent.session.close, ({ params }) =>
        answering(async () => {
          const session = this.#session(params.sessionId);
          this.#sessions.delete(session.id);
          await session.close();
          return {};
        }),
      )
      .onRequest(methods.agent.session.setMode, ({ params }) =>
        answering(() => {
          applyMode(this.#session(params.sessionId), params.modeId);
          return {};
        }),
      )
      .onRequest(methods.agent.session.setConfigOption, ({ params }) =>
        answering(() => {
          const session = this.#session(params.sessionId);
          applyConfigOption(session, params.configId, params.value);
          return { configOptions: configOptions(session) };
        }),
      )
      .onRequest(methods.agent.session.prompt, ({ params, signal }) =>
        answering(async () => {
          const session = this.#session(params.sessionId);
          const content = promptContent(params.prompt, promptAcceptance(session));
          return { stopReason: await session.prompt(content, signal) };
        }),
      )
      .onNotification(methods.agent.session.cancel, ({ params }) => {
        this.#sessions.get(params.sessionId)?.cancel();
      });
  }

  /** Serves one client over a byte stream pair until it disconnects, then disposes every session. */
  async serve(): Promise<void> {
    const connection = this.app().connect(ndJsonStream(this.#options.output, this.#options.input));
    await connection.closed;
    await this.dispose();
  }

  /** Closes every session and harness. */
  async dispose(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(sessions.map((session) => session.close()));
    const harnesses = [...this.#harnesses.values()];
    this.#harnesses.clear();
    await Promise.allSettled(harnesses.map(async (harness) => (await harness).dispose()));
  }

  /**
   * The capabilities of this connection. Capabilities are negotiated once, before any session exists,
   * so `image` is the answer for the model every new session starts on (the default route); a session
   * switched to a model without image input refuses image prompts with `IMAGES_UNSUPPORTED`.
   */
  #initialize(image: boolean): InitializeResponse {
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      },
      authMethods: [
        {
          id: reloadKeysMethod,
          name: 'Reload provider keys',
          description:
            'Rein reads provider keys (DEEPSEEK_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY) from its ' +
            'environment and its config file; this re-reads them. Without a key the offline demo model is used.',
        },
      ],
      agentInfo: { name: 'rein', title: 'Rein', version: this.#options.version },
    };
  }

  #session(sessionId: string): AcpSession {
    const session = this.#sessions.get(sessionId);
    if (session === undefined) {
      throw reinRequestError('SESSION_NOT_FOUND', `no open session ${sessionId}; create or load it first`);
    }
    return session;
  }

  /** The ACP session a Rein session belongs to: itself, or the session whose subagent it is. */
  #ownerOf(sessionId: string): AcpSession | undefined {
    const direct = this.#sessions.get(sessionId);
    if (direct !== undefined) return direct;
    for (const session of this.#sessions.values()) {
      let agent = session.harness.agents.get(sessionId)?.options.parent;
      while (agent !== undefined) {
        if (agent.id === session.id) return session;
        agent = agent.options.parent;
      }
    }
    return undefined;
  }

  async #workspace(cwd: string): Promise<ReinHarness> {
    if (!isAbsolute(cwd)) throw reinRequestError('INVALID_CWD', `cwd must be an absolute path, not '${cwd}'`);
    let real: string;
    try {
      real = await realpath(cwd);
    } catch (error) {
      throw reinRequestError('INVALID_CWD', `cannot work in ${cwd}: ${(error as Error).message}`);
    }
    let harness = this.#harnesses.get(real);
    if (harness === undefined) {
      harness = this.#createHarness(real);
      this.#harnesses.set(real, harness);
      // A workspace that failed to compose is not cached: the next request tries again.
      harness.catch(() => this.#harnesses.delete(real));
    }
    return harness;
  }

  async #createHarness(cwd: string): Promise<ReinHarness> {
    const harness = await createReinHarness({
      cwd,
      env: this.#options.env,
      ...(this.#options.model !== undefined ? { model: this.#options.model } : {}),
      ...(this.#options.approve !== undefined ? { approve: this.#options.approve } : {}),
      editorFiles: clientFiles({
        client: () => this.#client,
        capabilities: () => this.#capabilities,
        ownerOf: (sessionId) => this.#ownerOf(sessionId)?.id,
      }),
    });
    for (const warning of harness.warnings) this.#options.log(reinWarningLine(warning));
    for (const notice of harness.notices) this.#options.log(notice);
    harness.approvals.attach({ notify: (request, signal) => this.#askPermission(harness, request, signal) });
    return harness;
  }

  #adopt(harness: ReinHarness, agent: AcpSession['agent']): AcpSession {
    const client = this.#client;
    if (client === undefined) throw reinRequestError('NOT_CONNECTED', 'no client is connected');
    const session = new AcpSession(harness, agent, client);
    this.#sessions.set(session.id, session);
    return session;
  }

  async #open(sessionId: string, cwd: string, mcpServers: readonly McpServer[]): Promise<AcpSession> {
    const servers = clientMcpServers(mcpServers);
    const harness = await this.#workspace(cwd);
    const live = this.#sessions.get(sessionId);
    if (live !== undefined) {
      if (live.harness !== harness) throw mismatch(sessionId, live.harness.cwd);
      return live;
    }
    // Checked before the session is opened, so a refused session is neither locked nor repaired.
    const { header } = await harness.store.read(sessionId);
    if (header.cwd !== undefined && (await realpath(header.cwd).catch(() => header.cwd)) !== harness.cwd) {
      throw mismatch(sessionId, header.cwd);
    }
    const session = this.#adopt(harness, await harness.resumeAgent(sessionId));
    await this.#attachServers(session, servers);
    return session;
  }

  /**
   * Gives the session the client's MCP servers (its alone, shut down with it); a server that fails to
   * start is reported on stderr and its tools are missing. A configuration Rein refuses closes the
   * session again and answers the request with the error.
   */
  async #attachServers(session: AcpSession, servers: McpServerDefinition[]): Promise<void> {
    if (servers.length === 0) return;
    let attachment: ReturnType<ReinHarness['mcp']['attach']>;
    try {
      attachment = session.harness.mcp.attach(session.id, servers);
    } catch (error) {
      this.#sessions.delete(session.id);
      await session.close();
      throw error;
    }
    // The first request waits for them; session/new does not, so the editor's panel opens at once.
    void attachment.ready.then(() => {
      for (const status of attachment.status()) {
        if (status.state === 'ready') continue;
        const reason = status.error !== undefined ? `: ${status.error.message}` : '';
        this.#options.log(`rein acp: MCP server '${status.name}' is ${status.state}${reason}`);
      }
    });
  }

  async #replay(session: AcpSession): Promise<void> {
    const updates = replayUpdates(session.agent.session.events, {
      cwd: session.harness.cwd,
      tool: (name) => session.harness.tools.get(name),
      pricing: pricingLookup(session.harness.llm),
    });
    for (const update of updates) session.send(update);
    await session.flushed();
  }

  async #list(cwd: string | undefined, cursor: string | undefined): Promise<ListSessionsResponse> {
    // Listing reads the store only: no workspace is composed (nor its MCP servers started) for it.
    const store = this.#store();
    const wanted = cwd === undefined ? undefined : await realpath(cwd).catch(() => cwd);
    const rows = (await store.list()).filter(
      (row) => row.cwd !== undefined && (wanted === undefined || row.cwd === wanted),
    );
    const start = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isSafeInteger(start) || start < 0) {
      throw reinRequestError('INVALID_CURSOR', `cursor '${cursor}' was not given by session/list`);
    }
    const sessions: SessionInfo[] = [];
    let index = start;
    for (; index < rows.length && sessions.length < listPageSize; index++) {
      const row = rows[index]!;
      // Subagent sessions belong to their parent's tool call, not to the session list.
      if (row.parentSession !== undefined && (await store.read(row.id)).header.origin === 'subagent') {
        continue;
      }
      sessions.push({
        sessionId: row.id,
        cwd: row.cwd!,
        ...(row.title !== undefined ? { title: row.title } : {}),
        updatedAt: new Date(row.updatedAt).toISOString(),
      });
    }
    return { sessions, ...(index < rows.length ? { nextCursor: String(index) } : {}) };
  }

  #store(): SessionStore {
    this.#listStore ??= new DiskSessionStore({
      root: reinSessionsDirectory(resolveReinHome(undefined, this.#options.env)),
    });
    return this.#listStore;
  }

  async #askPermission(
    harness: ReinHarness,
    request: ApprovalRequest,
    signal: AbortSignal,
  ): Promise<ApprovalDecision | void> {
    const owner = this.#ownerOf(request.sessionId);
    const client = this.#client;
    if (owner === undefined || client === undefined) {
      return { decision: 'deny', reason: 'no editor session owns this call' };
    }
    const card = request.sessionId === owner.id ? owner.updates.presentation(request.callId) : undefined;
    const presentation =
      card ?? presentToolCall(harness.tools.get(request.name), request.name, request.arguments, harness.cwd);
    const title = request.sessionId === owner.id ? presentation.title : `subagent: ${presentation.title}`;
    let response: RequestPermissionResponse;
    try {
      response = await client.request(
        methods.client.session.requestPermission,
        {
          sessionId: owner.id,
          toolCall: {
            toolCallId: request.callId,
            title,
            kind: presentation.kind,
            status: 'pending',
            locations: presentation.locations,
            content: presentation.diffs,
            rawInput: presentation.rawInput,
          },
          options: permissionOptions,
        },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
    } catch (error) {
      if (signal.aborted) return { decision: 'aborted' };
      return { decision: 'deny', reason: `the editor could not ask: ${(error as Error).message}` };
    }
    if (response.outcome.outcome === 'cancelled') {
      return signal.aborted
        ? { decision: 'aborted' }
        : { decision: 'deny', reason: 'dismissed in the editor' };
    }
    switch (response.outcome.optionId) {
      case 'allow-once':
        return { decision: 'allow-once' };
      case 'allow-session':
        return { decision: 'allow-session' };
      case 'deny-session':
        return { decision: 'deny-session' };
      default:
        return { decision: 'deny' };
    }
  }
}

function mismatch(sessionId: string, cwd: string): Error {
  return reinRequestError(
    'WORKSPACE_MISMATCH',
    `session ${sessionId} works in ${cwd}; open it with that directory as cwd`,
  );
}

/** Runs Rein as an ACP agent over the given streams until the client disconnects. */
export async function serveAcp(options: AcpAgentOptions): Promise<void> {
  await new ReinAcpAgent(options).serve();
}
