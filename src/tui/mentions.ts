import { randomUUID } from 'node:crypto';
import type { ApprovalService, ContentBlock, PathFact, PermissionMode, Workspace } from '../index.ts';
import { evaluatePermission, readTextFile, runWithPathGrant, walkFiles } from '../index.ts';

/** The largest file a mention attaches. */
export const maxMentionBytes = 256 * 1024;

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
 * Attaches the mentioned files as text blocks after the prompt. Each mention is a read through the same
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
  try {
    const read = runWithPathGrant(verdict.grant, () => {
      const checked = context.workspace.check(path, 'read');
      return { checked, ...readTextFile(context.workspace, checked, maxMentionBytes) };
    });
    const display = read.checked.display;
    return {
      result: { path, attached: true, display, bytes: read.bytes },
      block: { type: 'text', text: `<file path="${display}">\n${read.text}\n</file>` },
    };
  } catch (error) {
    return refused(codeOf(error), messageOf(error));
  }
}

/** Workspace files for `@` completion (gitignored files left out), at most `limit` of them. */
export async function workspaceFiles(
  workspace: Workspace,
  limit: number,
  signal: AbortSignal,
): Promise<string[]> {
  const files: string[] = [];
  for await (const file of walkFiles(workspace, workspace.root, { respectGitignore: true, signal })) {
    files.push(file.display);
    if (files.length >= limit) break;
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
