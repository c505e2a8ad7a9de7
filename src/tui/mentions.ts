import { randomUUID } from 'node:crypto';
import type { ApprovalService, ContentBlock, PathFact, PermissionMode, Workspace } from '../internal.ts';
import { closeSync } from 'node:fs';
import { extname } from 'node:path';
import {
  evaluatePermission,
  formatBytes,
  openVerified,
  readTextFile,
  readWhole,
  runWithPathGrant,
  walkFiles,
} from '../internal.ts';

/** The largest text file a mention attaches. */
export const maxMentionBytes = 256 * 1024;
/** The largest image a mention attaches. */
export const maxImageBytes = 5 * 1024 * 1024;

const imageTypes: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

/** The outcome of one `@path` mention. */
export type MentionOutcome =
  | { readonly path: string; readonly attached: true; readonly display: string; readonly bytes: number }
  | { readonly path: string; readonly attached: false; readonly code: string; readonly reason: string };

/** What resolving mentions needs: the workspace confinement, the approval mode and the approvals seam. */
export interface MentionContext {
  readonly workspace: Workspace;
  readonly mode: PermissionMode;
  readonly approvals: ApprovalService;
  readonly sessionId: string;
  readonly signal: AbortSignal;
  /** Whether the model of the next request accepts images (`ModelInfo.images`). */
  readonly images: boolean;
  /** The most base64 characters one image may have for that model (`ModelInfo.imageBytes`), if it says. */
  readonly imageBytes?: number;
}

const mentionPattern = /(^|\s)@(?:"([^"]+)"|([^\s"]+))/g;

/** The paths a prompt mentions as `@path` or `@"path with spaces"`, in order, without repeats. */
export function mentionedPaths(text: string): string[] {
  const paths: string[] = [];
  for (const match of text.matchAll(mentionPattern)) {
    const path = (match[2] ?? match[3] ?? '').replace(/[,.;:!?)]+$/, '');
    if (path !== '' && !paths.includes(path)) paths.push(path);
  }
  return paths;
}

/**
 * Attaches the mentioned files after the prompt: text files as text blocks, images (png, jpeg, gif,
 * webp) as image blocks when the model takes images. Each mention is a read through the same
 * confinement and policy as the read tools: resolved to its real path, refused when protected or invalid,
 * asked through the approvals seam when it lies outside the workspace (in every mode that asks), and
 * read with the bounds of the file tools. Mentions that cannot be attached are reported, never dropped
 * silently; the prompt itself is always kept.
 */
export async function attachMentions(
  text: string,
  context: MentionContext,
): Promise<{ content: ContentBlock[]; outcomes: MentionOutcome[] }> {
  const content: ContentBlock[] = [{ type: 'text', text }];
  const outcomes: MentionOutcome[] = [];
  for (const path of mentionedPaths(text)) {
    const outcome = await attachOne(path, context);
    outcomes.push(outcome.result);
    if (outcome.block !== undefined) content.push(outcome.block);
  }
  return { content, outcomes };
}

async function attachOne(
  path: string,
  context: MentionContext,
): Promise<{ result: MentionOutcome; block?: ContentBlock }> {
  const refused = (code: string, reason: string): { result: MentionOutcome } => ({
    result: { path, attached: false, code, reason },
  });
  let fact: PathFact;
  let resolved: ReturnType<Workspace['resolve']>;
  try {
    resolved = context.workspace.resolve(path);
    fact = { requested: path, real: resolved.real, zone: resolved.zone, display: resolved.display };
  } catch (error) {
    return refused(codeOf(error), messageOf(error));
  }
  const verdict = evaluatePermission(
    { tool: '@mention', effect: 'read', paths: [fact] },
    { mode: context.mode, rules: [], sessionApprovals: new Set() },
  );
  if (verdict.decision.kind === 'deny') return refused('DENIED', verdict.decision.reason);
  if (verdict.decision.kind === 'ask') {
    const answer = await context.approvals.request(
      {
        sessionId: context.sessionId,
        turn: 0,
        step: 0,
        callId: `mention-${randomUUID()}`,
        name: '@mention',
        arguments: JSON.stringify({ path }),
        ...(verdict.decision.reason !== undefined ? { reason: verdict.decision.reason } : {}),
      },
      context.signal,
    );
    if (answer.decision === 'aborted') return refused('ABORTED', 'the mention was cancelled');
    if (answer.decision === 'deny') {
      return refused('DENIED', answer.reason ?? 'you denied reading it');
    }
  }
  const mediaType = imageTypes[extname(resolved.real).toLowerCase()];
  if (mediaType !== undefined) {
    if (!context.images) {
      return refused(
        'IMAGES_UNSUPPORTED',
        'the model of the next request does not take images (/model picks another)',
      );
    }
    try {
      const data = runWithPathGrant(verdict.grant, () => readImage(context.workspace, path));
      const base64 = data.toString('base64');
      if (context.imageBytes !== undefined && base64.length > context.imageBytes) {
        return refused(
          'IMAGES_TOO_LARGE',
          `the model of the next request takes images of up to ${formatBytes(context.imageBytes)} of ` +
            `base64, and this one has ${formatBytes(base64.length)}`,
        );
      }
      return {
        result: { path, attached: true, display: resolved.display, bytes: data.length },
        block: { type: 'image', mediaType, data: base64 },
      };
    } catch (error) {
      return refused(codeOf(error), messageOf(error));
    }
  }
  try {
    const read = runWithPathGrant(verdict.grant, () => {
      context.workspace.check(path, 'read');
      return readTextFile(context.workspace, path, maxMentionBytes);
    });
    const display = read.resolved.display;
    return {
      result: { path, attached: true, display, bytes: read.bytes },
      block: { type: 'text', text: `<file path="${display}">\n${read.text}\n</file>` },
    };
  } catch (error) {
    return refused(codeOf(error), messageOf(error));
  }
}

/** Reads an image through the workspace's confinement (rechecked at open, no symlink swapped in). */
function readImage(workspace: Workspace, path: string): Buffer {
  workspace.check(path, 'read');
  const opened = openVerified(workspace, path);
  try {
    if (!opened.stat.isFile())
      throw Object.assign(new Error(`${path} is not a regular file`), { code: 'NOT_A_FILE' });
    if (opened.stat.size > maxImageBytes) {
      throw Object.assign(
        new Error(`${path} is ${opened.stat.size} bytes, over the ${maxImageBytes}-byte limit`),
        { code: 'FILE_TOO_LARGE' },
      );
    }
    return readWhole(opened.fd, opened.stat.size);
  } finally {
    closeSync(opened.fd);
  }
}

/** Workspace files for `@` completion (gitignored files left out), at most `limit` of them. */
export async function workspaceFiles(
  workspace: Workspace,
  limit: number,
  signal: AbortSignal,
): Promise<string[]> {
  const files: string[] = [];
  const root = openVerified(workspace, '.');
  try {
    for await (const file of walkFiles(
      workspace,
      { fd: root.fd, path: root.resolved.real },
      { respectGitignore: true, signal },
    )) {
      files.push(file.display);
      if (files.length >= limit) break;
    }
  } finally {
    closeSync(root.fd);
  }
  return files;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'UNREADABLE';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
