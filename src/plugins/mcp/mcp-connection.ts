import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isAbortError } from '../../llm/index.ts';
import type { McpCallResult } from './mcp-content.ts';
import { McpError } from './mcp-error.ts';
import type { McpErrorCode } from './mcp-error.ts';
import { McpReadBuffer, replaceReadBuffer } from './mcp-read-buffer.ts';
import type { McpSdk } from './mcp-sdk.ts';
import { loadMcpSdk } from './mcp-sdk.ts';
import type { McpServerConfig } from './mcp-server-config.ts';

/** Where a server is in its life: not started, starting, ready, failed (see `lastError`), or closed. */
export type McpServerState = 'idle' | 'starting' | 'ready' | 'failed' | 'closed';

/** One tool as the server lists it (the fields Rein reads). */
export interface McpListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: unknown;
  readonly annotations?: {
    readonly title?: string;
    readonly readOnlyHint?: boolean;
    readonly destructiveHint?: boolean;
    readonly idempotentHint?: boolean;
    readonly openWorldHint?: boolean;
  };
}

/** Options of one connection. */
export interface McpConnectionOptions {
  readonly name: string;
  readonly config: McpServerConfig;
  /** The workspace: a stdio server's default working directory, and the root offered to the server. */
  readonly cwd: string;
  readonly startupTimeoutMs: number;
  readonly callTimeoutMs: number;
  /** The server's tool list changed (after a start or a `notifications/tools/list_changed`). */
  readonly onTools: (tools: readonly McpListedTool[]) => void;
  /** The state changed. */
  readonly onState: (state: McpServerState) => void;
}

const stderrLinesKept = 20;
const stderrBytesKept = 4_000;
// The largest JSON-RPC message a stdio server may send: room for a result carrying the 20 MiB of images a
// request may take, plus text. The SDK's default (10 MiB) cut such a result off mid-line.
const maxStdioMessageBytes = 32 * 1_048_576;

/**
 * One MCP server: started on demand (connect, initialize, list tools) within a start-up timeout,
 * restarted on the next call after it failed or died, with its last stderr lines kept for errors.
 */
export class McpConnection {
  readonly name: string;
  readonly config: McpServerConfig;
  #state: McpServerState = 'idle';
  #client: Client | undefined;
  #transport: Transport | undefined;
  #starting: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #stderr: string[] = [];
  #stderrPartial = '';
  #protocolNoise: string | undefined;
  // What broke the transport itself (a message over the size bound, a pipe error), for the error it causes.
  #transportFault: string | undefined;
  #lastError: McpError | undefined;
  #tools: readonly McpListedTool[] = [];
  #generation = 0;
  #failedAt = 0;
  readonly #options: McpConnectionOptions;

  constructor(options: McpConnectionOptions) {
    this.name = options.name;
    this.config = options.config;
    this.#options = options;
  }

  /** The current state. */
  get state(): McpServerState {
    return this.#state;
  }

  /** Why the last start or call failed, when the server is `failed`. */
  get lastError(): McpError | undefined {
    return this.#lastError;
  }

  /** When the server last entered `failed` (`performance.now()` time; 0 if never). */
  get failedAt(): number {
    return this.#failedAt;
  }

  /** The tools of the last successful listing. */
  get tools(): readonly McpListedTool[] {
    return this.#tools;
  }

  /** The server's name and version from `initialize`, once ready. */
  get serverVersion(): { name: string; version: string } | undefined {
    return this.#client?.getServerVersion();
  }

  /** The last lines the server wrote to stderr (stdio servers). */
  get stderrTail(): readonly string[] {
    const lines = [...this.#stderr];
    if (this.#stderrPartial !== '') lines.push(this.#stderrPartial);
    return lines;
  }

  /** Resolves once a pending refresh of the tool list (after `list_changed`) has settled. */
  async settled(): Promise<void> {
    if (this.#starting !== undefined) await this.#starting.catch(() => undefined);
    if (this.#refreshing !== undefined) await this.#refreshing;
  }

  /** Starts the server unless it is ready or starting; rejects with a McpError naming it. */
  start(): Promise<void> {
    if (this.#state === 'closed') {
      return Promise.reject(
        new McpError('MCP_CLOSED', `MCP server ${this.name} is shut down`, { server: this.name }),
      );
    }
    if (this.#state === 'ready') return Promise.resolve();
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  /** Calls one tool; restarts a failed server first. Aborting the signal sends MCP's cancellation. */
  async call(
    tool: string,
    args: unknown,
    options: {
      signal: AbortSignal;
      onProgress?: (progress: number, total?: number, message?: string) => void;
    },
  ): Promise<McpCallResult> {
    await this.start();
    const client = this.#client;
    if (client === undefined) throw this.#error('MCP_SERVER_DIED', 'is not running');
    const generation = this.#generation;
    try {
      const onProgress = options.onProgress;
      return (await client.callTool(
        { name: tool, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        {
          signal: options.signal,
          timeout: this.config.callTimeoutMs ?? this.#options.callTimeoutMs,
          resetTimeoutOnProgress: true,
          ...(onProgress !== undefined
            ? {
                onprogress: (progress: {
                  progress: number;
                  total?: number | undefined;
                  message?: string | undefined;
                }) => onProgress(progress.progress, progress.total, progress.message),
              }
            : {}),
        },
      )) as McpCallResult;
    } catch (error) {
      if (options.signal.aborted && (isAbortError(error) || (error as Error).name === 'AbortError'))
        throw error;
      throw await this.#callFailure(error, tool, generation);
    }
  }

  /** Shuts the server down for good (kills a stdio process). */
  async close(): Promise<void> {
    this.#setState('closed');
    await this.#disconnect();
  }

  async #start(): Promise<void> {
    this.#setState('starting');
    this.#stderr = [];
    this.#stderrPartial = '';
    this.#protocolNoise = undefined;
    this.#transportFault = undefined;
    const generation = ++this.#generation;
    // Loading the SDK (once per process) is Rein's cost, not the server's: it is outside the timeout.
    let sdk: McpSdk;
    try {
      sdk = await loadMcpSdk();
    } catch (error) {
      this.#lastError = this.#error(
        'MCP_START_FAILED',
        `could not load the MCP SDK: ${describe(error)}`,
        error,
      );
      this.#setState('failed');
      throw this.#lastError;
    }
    const timeoutMs = this.config.startupTimeoutMs ?? this.#options.startupTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(this.#error('MCP_START_TIMEOUT', `did not finish starting within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.#connect(sdk, generation, timeoutMs), deadline]);
      const tools = await Promise.race([this.#listTools(), deadline]);
      if (generation !== this.#generation || this.#state === 'closed') return;
      this.#tools = tools;
      this.#lastError = undefined;
      this.#setState('ready');
      this.#options.onTools(tools);
    } catch (error) {
      const failure =
        error instanceof McpError
          ? error
          : this.#error('MCP_START_FAILED', `failed to start: ${describe(error)}`, error);
      await this.#disconnect();
      if (this.#state !== 'closed') {
        this.#lastError = await this.#withStderr(failure);
        this.#setState('failed');
      }
      throw this.#lastError ?? failure;
    } finally {
      clearTimeout(timer);
    }
  }

  async #connect(sdk: McpSdk, generation: number, timeoutMs: number): Promise<void> {
    const config = this.config;
    if (config.type === 'stdio') {
      const transport = new sdk.StdioClientTransport({
        command: config.command,
        ...(config.args !== undefined ? { args: [...config.args] } : {}),
        env: { ...sdk.getDefaultEnvironment(), ...config.env },
        cwd: config.cwd ?? this.#options.cwd,
        stderr: 'pipe',
        maxBufferSize: maxStdioMessageBytes,
      });
      replaceReadBuffer(
        transport,
        new McpReadBuffer({
          maxBytes: maxStdioMessageBytes,
          parse: (line) => sdk.JSONRPCMessageSchema.parse(JSON.parse(line)),
        }),
      );
      transport.stderr?.on('data', (chunk: Buffer) => this.#collectStderr(chunk.toString('utf8')));
      await this.#open(sdk, transport, generation, timeoutMs);
      return;
    }
    const url = new URL(config.url);
    const requestInit = config.headers !== undefined ? { headers: { ...config.headers } } : undefined;
    if (config.type === 'http') {
      try {
        const transport = new sdk.StreamableHTTPClientTransport(
          url,
          requestInit !== undefined ? { requestInit } : {},
        );
        await this.#open(sdk, transport, generation, timeoutMs);
        return;
      } catch (error) {
        // Older servers speak only HTTP+SSE: a 4xx to the Streamable HTTP POST means "try the legacy transport".
        const status = error instanceof sdk.StreamableHTTPError ? error.code : undefined;
        if (status === undefined || status < 400 || status >= 500) throw error;
        await this.#disconnect();
      }
    }
    const transport = new sdk.SSEClientTransport(url, {
      ...(requestInit !== undefined ? { requestInit } : {}),
      ...(config.headers !== undefined
        ? {
            eventSourceInit: {
              fetch: (input: string | URL | Request, init?: RequestInit) =>
                fetch(input, {
                  ...init,
                  headers: { ...(init?.headers as Record<string, string>), ...config.headers },
                }),
            },
          }
        : {}),
    });
    await this.#open(sdk, transport, generation, timeoutMs);
  }

  async #open(sdk: McpSdk, transport: Transport, generation: number, timeoutMs: number): Promise<void> {
    const client = new sdk.Client(
      { name: 'rein', version: '0.1.0' },
      { capabilities: { roots: { listChanged: false } } },
    );
    client.setRequestHandler(sdk.ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(this.#options.cwd).href, name: 'workspace' }],
    }));
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
      if (generation === this.#generation && this.#state === 'ready') this.#refresh();
    });
    client.onclose = () => {
      if (generation !== this.#generation || this.#state === 'closed') return;
      this.#client = undefined;
      this.#transport = undefined;
      if (this.#state === 'ready') {
        this.#lastError = this.#error('MCP_SERVER_DIED', 'exited');
        this.#setState('failed');
      }
    };
    client.onerror = (error) => {
      if (generation !== this.#generation) return;
      // A line on stdout that is not JSON-RPC: the server is broken once it is running (noise before
      // initialize, such as a banner, is only remembered for the error message).
      if (error instanceof SyntaxError || (error as { name?: string }).name === 'ZodError') {
        // After the transport broke, the bytes that follow are the rest of the message it cut off.
        if (this.#transportFault === undefined) this.#protocolNoise ??= describe(error);
        if (this.#state === 'ready') {
          this.#lastError = this.#error(
            'MCP_SERVER_DIED',
            this.#transportFault !== undefined
              ? `its connection failed (${this.#transportFault})`
              : `wrote output that is not JSON-RPC to stdout (${this.#protocolNoise})`,
          );
          this.#setState('failed');
          void this.#disconnect();
        }
      } else {
        this.#transportFault ??= describe(error);
      }
    };
    this.#client = client;
    this.#transport = transport;
    await client.connect(transport, { timeout: timeoutMs });
  }

  async #listTools(): Promise<McpListedTool[]> {
    const client = this.#client;
    if (client === undefined) throw this.#error('MCP_START_FAILED', 'closed its connection while starting');
    if (client.getServerCapabilities()?.tools === undefined) return [];
    const tools: McpListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor !== undefined ? { cursor } : undefined);
      tools.push(...(page.tools as McpListedTool[]));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  #refresh(): void {
    const refresh = this.#listTools().then(
      (tools) => {
        if (this.#state !== 'ready') return;
        // A notification that changes nothing (servers send one right after initialize) changes nothing.
        if (JSON.stringify(tools) === JSON.stringify(this.#tools)) return;
        this.#tools = tools;
        this.#options.onTools(tools);
      },
      () => {
        // A failed re-listing keeps the previous tools; a dead server is noticed by its next call.
      },
    );
    this.#refreshing = refresh.finally(() => {
      if (this.#refreshing === tracked) this.#refreshing = undefined;
    });
    const tracked = this.#refreshing;
  }

  async #callFailure(error: unknown, tool: string, generation: number): Promise<McpError> {
    const code = (error as { code?: unknown }).code;
    if (code === -32001) {
      return this.#error(
        'MCP_CALL_TIMEOUT',
        `did not answer ${tool} within ${this.config.callTimeoutMs ?? this.#options.callTimeoutMs} ms`,
        error,
      );
    }
    const died =
      code === -32000 ||
      this.#state === 'failed' ||
      generation !== this.#generation ||
      this.#client === undefined;
    if (died) {
      // A protocol violation says more than "exited"; otherwise say which call the server died in.
      const failure =
        this.#protocolNoise !== undefined && this.#lastError?.code === 'MCP_SERVER_DIED'
          ? this.#lastError
          : this.#error(
              'MCP_SERVER_DIED',
              this.#transportFault !== undefined
                ? `its connection failed during ${tool} (${this.#transportFault})`
                : `exited during ${tool}`,
              error,
            );
      if (this.#state !== 'closed') this.#setState('failed');
      // The process's last stderr lines may arrive just after its stdout closed.
      await new Promise((resolve) => setTimeout(resolve, 50));
      this.#lastError = await this.#withStderr(failure);
      return this.#lastError;
    }
    return this.#error('MCP_CALL_FAILED', `failed ${tool}: ${describe(error)}`, error);
  }

  async #disconnect(): Promise<void> {
    const client = this.#client;
    const transport = this.#transport;
    this.#client = undefined;
    this.#transport = undefined;
    const pid = (transport as { pid?: number | null } | undefined)?.pid;
    // The SDK waits up to 2 s for a process to leave after stdin closes; a stuck one is signalled sooner.
    const kill =
      typeof pid === 'number'
        ? setTimeout(() => {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // Already gone.
            }
          }, 300)
        : undefined;
    try {
      await (client !== undefined ? client.close() : transport?.close());
    } catch {
      // Closing a broken connection fails the way it broke; the reason was recorded already.
    } finally {
      clearTimeout(kill);
    }
  }

  #collectStderr(text: string): void {
    const lines = (this.#stderrPartial + text).split('\n');
    this.#stderrPartial = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') this.#stderr.push(line.trimEnd());
    if (this.#stderrPartial.length > stderrBytesKept)
      this.#stderrPartial = this.#stderrPartial.slice(-stderrBytesKept);
    while (this.#stderr.length > stderrLinesKept) this.#stderr.shift();
    let bytes = this.#stderr.reduce((sum, line) => sum + line.length, 0);
    while (bytes > stderrBytesKept && this.#stderr.length > 1) bytes -= this.#stderr.shift()!.length;
  }

  async #withStderr(failure: McpError): Promise<McpError> {
    const tail = this.stderrTail;
    const noise =
      this.#protocolNoise !== undefined && !failure.message.includes(this.#protocolNoise)
        ? `; it wrote output that is not JSON-RPC to stdout (${this.#protocolNoise})`
        : '';
    if (tail.length === 0 && noise === '') return failure;
    const text = tail.length > 0 ? `\nlast stderr lines:\n${tail.join('\n')}` : '';
    return new McpError(failure.code, `${failure.message}${noise}${text}`, {
      cause: failure.cause,
      server: this.name,
    });
  }

  // No cause is chained: the message already says what the cause said, and results show the chain.
  #error(code: McpErrorCode, what: string, _cause?: unknown): McpError {
    return new McpError(code, `MCP server ${this.name} ${what}`, { server: this.name });
  }

  #setState(state: McpServerState): void {
    if (this.#state === state || this.#state === 'closed') return;
    this.#state = state;
    if (state === 'failed') this.#failedAt = performance.now();
    this.#options.onState(state);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') return `command not found (${error.message})`;
    return error.message;
  }
  return String(error);
}
