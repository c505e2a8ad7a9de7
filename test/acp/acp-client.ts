import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import type {
  ClientCapabilities,
  ClientContext,
  InitializeResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  SessionUpdate,
} from '@agentclientprotocol/sdk';
import { PROTOCOL_VERSION, client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { reinBin, reinEnvironment } from '../cli/rein-process.ts';

/** Options of one `rein acp` process driven by the SDK's own client. */
export interface AcpClientOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  args?: readonly string[];
  capabilities?: ClientCapabilities;
  /** Answers `session/request_permission`; allow once by default. */
  onPermission?: (
    request: RequestPermissionRequest,
  ) => Promise<RequestPermissionResponse> | RequestPermissionResponse;
  /** Answers `fs/read_text_file`. */
  onReadTextFile?: (path: string) => string;
  /** Receives `fs/write_text_file`. */
  onWriteTextFile?: (path: string, content: string) => void;
}

/** A running `rein acp` with the SDK's `client()` connected to its stdio. */
export interface AcpClient {
  child: ChildProcess;
  agent: ClientContext;
  /** The agent's answer to `initialize`. */
  initialized: InitializeResponse;
  /** Every `session/update` received, in order. */
  notifications: SessionNotification[];
  /** Every permission request received, in order. */
  permissions: RequestPermissionRequest[];
  stderr(): string;
  /** The updates of one session, in order. */
  updatesOf(sessionId: string): SessionUpdate[];
  /** Closes stdin and waits for the process to exit. */
  close(): Promise<number | null>;
}

/** Starts `rein acp` and initializes it through the SDK's client side. */
export async function startAcp(options: AcpClientOptions): Promise<AcpClient> {
  const child = spawn(process.execPath, [reinBin, 'acp', ...(options.args ?? [])], {
    cwd: options.cwd,
    env: reinEnvironment(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const notifications: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const app = client({ name: 'rein-test' })
    .onNotification(methods.client.session.update, ({ params }) => {
      notifications.push(params);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      return (
        (await options.onPermission?.(params)) ?? {
          outcome: { outcome: 'selected', optionId: 'allow-once' },
        }
      );
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => ({
      content: options.onReadTextFile?.(params.path) ?? '',
    }))
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      options.onWriteTextFile?.(params.path, params.content);
      return {};
    });
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
    ),
  );
  const initialized = await connection.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: options.capabilities ?? {},
    clientInfo: { name: 'rein-test', version: '1' },
  });
  return {
    child,
    agent: connection.agent,
    initialized,
    notifications,
    permissions,
    stderr: () => stderr,
    updatesOf: (sessionId) =>
      notifications.filter((entry) => entry.sessionId === sessionId).map((entry) => entry.update),
    close: async () => {
      connection.close();
      child.stdin!.end();
      return exited;
    },
  };
}

/** The text of a run of message chunks of one kind. */
export function chunkText(
  updates: readonly SessionUpdate[],
  kind: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk',
): string {
  let text = '';
  for (const update of updates) {
    if (update.sessionUpdate === kind && update.content.type === 'text') text += update.content.text;
  }
  return text;
}

/** The update kinds in order, with consecutive chunks of one kind folded into one entry. */
export function updateKinds(updates: readonly SessionUpdate[]): string[] {
  const kinds: string[] = [];
  for (const update of updates) {
    const kind =
      update.sessionUpdate === 'tool_call_update'
        ? `tool_call_update:${update.status ?? ''}`
        : update.sessionUpdate;
    if (kind.endsWith('_chunk') && kinds.at(-1) === kind) continue;
    if (kind === 'usage_update') continue;
    kinds.push(kind);
  }
  return kinds;
}
