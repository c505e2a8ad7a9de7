import type { AgentContext, ClientCapabilities } from '@agentclientprotocol/sdk';
import { RequestError, methods } from '@agentclientprotocol/sdk';
import type { EditorFileContext, EditorFiles } from '../internal.ts';
import { ToolError } from '../internal.ts';

/** What the bridge asks of the agent: the client, its capabilities, and which editor session owns a Rein session. */
export interface ClientFilesHost {
  client(): AgentContext | undefined;
  capabilities(): ClientCapabilities;
  /** The ACP session a Rein session (or its subagent) belongs to, if an editor opened it. */
  ownerOf(sessionId: string): string | undefined;
}

const resourceNotFound = -32002;

function failure(error: unknown, path: string, action: 'read' | 'write'): ToolError {
  if (error instanceof RequestError && error.code === resourceNotFound) {
    return new ToolError('FILE_NOT_FOUND', `${path} does not exist in the editor`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ToolError('EDITOR_FILE_FAILED', `the editor could not ${action} ${path}: ${message}`, {
    cause: error,
  });
}

/**
 * The built-in file tools' editor seam over ACP: reads and writes go to the client's `fs/read_text_file`
 * / `fs/write_text_file` for sessions an editor opened, when the client offers them (the tools have
 * already confined the path to the workspace); other sessions use the disk.
 */
export function clientFiles(host: ClientFilesHost): EditorFiles {
  const target = (
    capability: 'readTextFile' | 'writeTextFile',
    context: EditorFileContext,
  ): { client: AgentContext; sessionId: string } | undefined => {
    const client = host.client();
    if (client === undefined || host.capabilities().fs?.[capability] !== true) return undefined;
    const sessionId = host.ownerOf(context.sessionId);
    return sessionId === undefined ? undefined : { client, sessionId };
  };
  const options = (context: EditorFileContext) => ({
    cancellationSignal: context.signal,
    stopWaitingOnCancel: true,
  });
  return {
    async readTextFile(path, context) {
      const found = target('readTextFile', context);
      if (found === undefined) return undefined;
      try {
        const response = await found.client.request(
          methods.client.fs.readTextFile,
          { sessionId: found.sessionId, path },
          options(context),
        );
        return response.content;
      } catch (error) {
        throw failure(error, path, 'read');
      }
    },
    async writeTextFile(path, text, context) {
      const found = target('writeTextFile', context);
      if (found === undefined) return false;
      try {
        await found.client.request(
          methods.client.fs.writeTextFile,
          { sessionId: found.sessionId, path, content: text },
          options(context),
        );
        return true;
      } catch (error) {
        throw failure(error, path, 'write');
      }
    },
  };
}
