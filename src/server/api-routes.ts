import { isAbsolute, resolve } from 'node:path';
import type { Agent, ApprovalDecision, ContentBlock, Harness, ModelInfo, SessionSummary } from '../index.ts';
import { HarnessError, acceptsImages, checkImagesFit, summarizeSession } from '../internal.ts';
import { transcriptCarriesScan } from '../internal.ts';
import { acknowledgeDurably } from './durable-acknowledgement.ts';
import { goalBudgetRoutes } from './goal-budget-routes.ts';
import { mcpRoutes } from './mcp-routes.ts';
import { settledHistory } from './settled-history.ts';
import { historyPage, historyPageRequest } from './history-page.ts';
import { HttpError } from './http-error.ts';
import { messageBodyLimit, messageFields, reasoningEffortField } from './message-body.ts';
import { objectBody, optionalString } from './request-body.ts';
import type { ReinServerOptions } from './server-options.ts';
import type { SessionHub } from './session-hub.ts';

/** What every route handler can use. */
export interface ApiContext {
  readonly harness: Harness;
  readonly hub: SessionHub;
  readonly options: ReinServerOptions;
  /** Makes a stored session live (resuming it once, even under concurrent requests). */
  live(sessionId: string): Promise<Agent>;
}

/** A handler's answer: a body, with 200 unless it says otherwise. */
export interface ApiAnswer {
  status?: number;
  body: unknown;
}

/** One route's handler: the context, the path's captured ids, the parsed JSON body and the URL. */
export type Handler = (
  context: ApiContext,
  params: readonly string[],
  body: unknown,
  url: URL,
) => Promise<ApiAnswer>;

/** One row of the API table. */
export interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly pattern: RegExp;
  readonly handler: Handler;
  /** The largest JSON body this route reads, in bytes (1 MiB when omitted). */
  readonly bodyLimit?: number;
}

const id = '([^/]+)';

/** The JSON API, as (method, path pattern, handler) rows. */
export const apiRoutes: readonly Route[] = [
  { method: 'GET', pattern: /^\/api\/info$/, handler: info },
  { method: 'GET', pattern: /^\/api\/models$/, handler: models },
  { method: 'GET', pattern: /^\/api\/sessions$/, handler: listSessions },
  { method: 'POST', pattern: /^\/api\/sessions$/, handler: createSession },
  { method: 'GET', pattern: new RegExp(`^/api/sessions/${id}$`), handler: getSession },
  { method: 'DELETE', pattern: new RegExp(`^/api/sessions/${id}$`), handler: deleteSession },
  { method: 'POST', pattern: new RegExp(`^/api/sessions/${id}/resume$`), handler: resumeSession },
  { method: 'POST', pattern: new RegExp(`^/api/sessions/${id}/fork$`), handler: forkSession },
  { method: 'GET', pattern: new RegExp(`^/api/sessions/${id}/events$`), handler: sessionEvents },
  {
    method: 'POST',
    pattern: new RegExp(`^/api/sessions/${id}/messages$`),
    handler: sendMessage,
    bodyLimit: messageBodyLimit,
  },
  { method: 'GET', pattern: new RegExp(`^/api/sessions/${id}/inbox$`), handler: listInbox },
  { method: 'DELETE', pattern: new RegExp(`^/api/sessions/${id}/inbox/${id}$`), handler: removeQueued },
  { method: 'POST', pattern: new RegExp(`^/api/sessions/${id}/inbox/${id}/send-now$`), handler: sendNow },
  { method: 'POST', pattern: new RegExp(`^/api/sessions/${id}/cancel$`), handler: cancel },
  { method: 'GET', pattern: new RegExp(`^/api/sessions/${id}/approvals$`), handler: listApprovals },
  { method: 'POST', pattern: new RegExp(`^/api/sessions/${id}/approvals/${id}$`), handler: answerApproval },
  { method: 'POST', pattern: new RegExp(`^/api/sessions/${id}/compact$`), handler: compact },
  { method: 'PUT', pattern: new RegExp(`^/api/sessions/${id}/model$`), handler: setModel },
  ...goalBudgetRoutes,
  ...mcpRoutes,
  { method: 'GET', pattern: /^\/api\/settings$/, handler: getSettings },
  { method: 'PUT', pattern: new RegExp(`^/api/settings/keys/${id}$`), handler: setKey },
  { method: 'PUT', pattern: /^\/api\/settings\/approval-mode$/, handler: setApprovalMode },
];

async function info(context: ApiContext): Promise<ApiAnswer> {
  const { harness, options } = context;
  return {
    body: {
      name: 'rein',
      defaultModel: harness.defaultModel ?? null,
      cwd: options.cwd ?? process.cwd(),
      home: options.home ?? null,
      features: {
        compaction: options.compact !== undefined,
        settings: options.settings !== undefined,
        keys: options.settings?.setProviderKey !== undefined,
      },
    },
  };
}

/** One model row of the picker. */
export interface ModelRow extends ModelInfo {
  provider: string;
  model: string;
}

/** Every model the registered providers list, with what they describe about it. */
export function listModelRows(harness: Harness): ModelRow[] {
  const rows: ModelRow[] = [];
  for (const provider of harness.llm.providers()) {
    const adapter = harness.llm.adapter(provider);
    for (const model of adapter?.listModels?.() ?? []) {
      rows.push({ ...(adapter?.describeModel?.(model) ?? {}), provider, model });
    }
  }
  const fallback = harness.defaultModel;
  if (
    fallback !== undefined &&
    !rows.some((row) => row.provider === fallback.provider && row.model === fallback.model)
  ) {
    const adapter = harness.llm.adapter(fallback.provider);
    rows.unshift({ ...(adapter?.describeModel?.(fallback.model) ?? {}), ...fallback });
  }
  return rows;
}

async function models(context: ApiContext): Promise<ApiAnswer> {
  return {
    body: { models: listModelRows(context.harness), defaultModel: context.harness.defaultModel ?? null },
  };
}

async function listSessions(context: ApiContext): Promise<ApiAnswer> {
  const { harness } = context;
  const sessions = (await harness.store.list()).map((summary) => {
    const agent = harness.agents.get(summary.id);
    return { ...summary, live: agent !== undefined, status: agent?.status ?? 'idle' };
  });
  return { body: { sessions } };
}

async function createSession(
  context: ApiContext,
  _params: readonly string[],
  body: unknown,
): Promise<ApiAnswer> {
  const fields = objectBody(body);
  const provider = optionalString(fields, 'provider');
  const model = optionalString(fields, 'model');
  if ((provider === undefined) !== (model === undefined)) {
    throw new HttpError(400, 'INVALID_REQUEST', 'provider and model go together');
  }
  if (provider !== undefined) requireProvider(context.harness, provider);
  const cwd = optionalString(fields, 'cwd') ?? context.options.cwd ?? process.cwd();
  if (!isAbsolute(cwd)) throw new HttpError(400, 'INVALID_REQUEST', 'cwd must be an absolute path');
  const elsewhere = workspaceMismatch(context.options.workspace, cwd);
  if (elsewhere !== undefined) throw elsewhere;
  const reasoningEffort = reasoningEffortField(fields);
  const agent = await context.harness.createAgent({
    cwd,
    ...(provider !== undefined && model !== undefined ? { provider, model } : {}),
    ...(reasoningEffort !== undefined ? { reasoningEffort } : {}),
  });
  context.hub.keepApprover(agent.id);
  return { status: 201, body: { id: agent.id, state: context.hub.state(agent.id) } };
}

async function getSession(context: ApiContext, [sessionId]: readonly string[]): Promise<ApiAnswer> {
  const summary = await summaryOf(context, sessionId!);
  return { body: { summary, state: context.hub.state(sessionId!) } };
}

async function deleteSession(context: ApiContext, [sessionId]: readonly string[]): Promise<ApiAnswer> {
  await summaryOf(context, sessionId!);
  const agent = context.harness.agents.get(sessionId!);
  if (agent !== undefined) await agent.dispose();
  context.hub.closeSession(sessionId!, 'deleted');
  await context.harness.store.delete(sessionId!);
  return { body: { deleted: sessionId } };
}

async function resumeSession(context: ApiContext, [sessionId]: readonly string[]): Promise<ApiAnswer> {
  const agent = await context.live(sessionId!);
  return { body: { id: agent.id, state: context.hub.state(agent.id) } };
}

async function forkSession(
  context: ApiContext,
  [sessionId]: readonly string[],
  body: unknown,
): Promise<ApiAnswer> {
  const fields = objectBody(body);
  const atTurn = fields.atTurn;
  if (atTurn !== undefined && (typeof atTurn !== 'number' || !Number.isSafeInteger(atTurn) || atTurn < 1)) {
    throw new HttpError(400, 'INVALID_REQUEST', 'atTurn must be a positive integer');
  }
  await summaryOf(context, sessionId!);
  const header = await context.harness.store.fork(sessionId!, atTurn !== undefined ? { atTurn } : {});
  return { status: 201, body: { id: header.id, parentSession: sessionId } };
}

async function sessionEvents(
  context: ApiContext,
  [sessionId]: readonly string[],
  _body: unknown,
  url: URL,
): Promise<ApiAnswer> {
  // `?tail=<events>[&before=<seq>]`: the last turns with the fold of what came before (see historyPage).
  const page = historyPageRequest(url);
  if (page !== undefined) {
    const log = await context.hub.log(sessionId!);
    return { body: historyPage(log, page, context.hub.savedScan(sessionId!, transcriptCarriesScan)) };
  }
  const from = seqParameter(url.searchParams.get('from'));
  const slice = await context.hub.events(sessionId!, from);
  // `?settled=1`: what a transcript needs, without the chunks of answered steps (see settledHistory).
  return { body: { events: url.searchParams.get('settled') === '1' ? settledHistory(slice) : slice } };
}

async function sendMessage(
  context: ApiContext,
  [sessionId]: readonly string[],
  body: unknown,
): Promise<ApiAnswer> {
  const { text, images, mode } = messageFields(body);
  const agent = await context.live(sessionId!);
  if (images.length > 0) {
    const route = context.hub.routeOf(agent.id) ?? context.harness.defaultModel;
    const info =
      route !== undefined
        ? context.harness.llm.adapter(route.provider)?.describeModel?.(route.model)
        : undefined;
    const name = route !== undefined ? `${route.provider}/${route.model}` : 'this session’s model';
    if (!acceptsImages(info)) {
      throw new HttpError(
        400,
        'IMAGES_UNSUPPORTED',
        `${name} does not accept images; pick a model that does`,
      );
    }
    try {
      checkImagesFit(images, info, name);
    } catch (error) {
      if (error instanceof HarnessError) throw new HttpError(413, error.code, error.message);
      throw error;
    }
  }
  context.hub.keepApprover(agent.id);
  const input: string | ContentBlock[] =
    images.length === 0
      ? text
      : [...(text.trim() === '' ? [] : [{ type: 'text' as const, text }]), ...images];
  const message =
    mode === 'steer' ? agent.steer(input) : mode === 'inject' ? agent.inject(input) : agent.followup(input);
  await acknowledgeDurably(agent);
  return { status: 202, body: { message, state: context.hub.state(agent.id) } };
}

async function listInbox(context: ApiContext, [sessionId]: readonly string[]): Promise<ApiAnswer> {
  await summaryOf(context, sessionId!);
  return { body: context.hub.state(sessionId!).inbox };
}

async function removeQueued(
  context: ApiContext,
  [sessionId, messageId]: readonly string[],
): Promise<ApiAnswer> {
  const agent = liveOrThrow(context, sessionId!);
  if (!agent.inbox.remove(messageId!)) {
    throw new HttpError(404, 'NOT_PENDING', `message ${messageId} is not queued`);
  }
  return { body: { removed: messageId, inbox: context.hub.state(agent.id).inbox } };
}

async function sendNow(context: ApiContext, [sessionId, messageId]: readonly string[]): Promise<ApiAnswer> {
  const agent = liveOrThrow(context, sessionId!);
  const found = agent.inbox.find(messageId!);
  if (found === undefined) throw new HttpError(404, 'NOT_PENDING', `message ${messageId} is not queued`);
  if (agent.status === 'running') {
    // The running turn claims it at its next step boundary: it steers the current work.
    agent.inbox.move(messageId!, 'next-step');
  } else {
    // Idle: nothing drains the queue, so the message starts a turn of its own now (same message id).
    agent.inbox.remove(messageId!);
    agent.followup(found.message);
  }
  await acknowledgeDurably(agent);
  return { body: { sent: messageId, state: context.hub.state(agent.id) } };
}

async function cancel(
  context: ApiContext,
  [sessionId]: readonly string[],
  body: unknown,
): Promise<ApiAnswer> {
  const fields = objectBody(body);
  await summaryOf(context, sessionId!);
  const agent = context.harness.agents.get(sessionId!);
  agent?.cancel({ kind: 'user' }, { keepInbox: fields.keepInbox === true });
  return { body: { state: context.hub.state(sessionId!) } };
}

async function listApprovals(context: ApiContext, [sessionId]: readonly string[]): Promise<ApiAnswer> {
  await summaryOf(context, sessionId!);
  return { body: { approvals: context.harness.approvals.pending(sessionId!) } };
}

async function answerApproval(
  context: ApiContext,
  [sessionId, requestId]: readonly string[],
  body: unknown,
): Promise<ApiAnswer> {
  const fields = objectBody(body);
  const pending = context.harness.approvals
    .pending(sessionId!)
    .find((request) => request.requestId === requestId);
  if (pending === undefined) {
    throw new HttpError(
      404,
      'APPROVAL_NOT_PENDING',
      `approval ${requestId} is not waiting (already answered?)`,
    );
  }
  let decision: ApprovalDecision;
  switch (fields.decision) {
    case 'allow-once':
      decision = { decision: 'allow-once' };
      break;
    case 'allow-session':
      decision = { decision: 'allow-session' };
      break;
    case 'deny':
    case 'deny-session': {
      const reason = optionalString(fields, 'reason');
      decision =
        reason !== undefined && reason.trim() !== ''
          ? { decision: fields.decision, reason }
          : { decision: fields.decision };
      break;
    }
    default:
      throw new HttpError(
        400,
        'INVALID_REQUEST',
        'decision must be allow-once, allow-session, deny or deny-session',
      );
  }
  if (!context.harness.approvals.answer(requestId!, decision)) {
    throw new HttpError(
      404,
      'APPROVAL_NOT_PENDING',
      `approval ${requestId} is not waiting (already answered?)`,
    );
  }
  return { body: { answered: requestId, decision: decision.decision } };
}

async function compact(context: ApiContext, [sessionId]: readonly string[]): Promise<ApiAnswer> {
  const run = context.options.compact;
  if (run === undefined) {
    throw new HttpError(501, 'COMPACTION_UNAVAILABLE', 'this server was started without compaction');
  }
  const agent = await context.live(sessionId!);
  if (agent.status !== 'idle')
    throw new HttpError(409, 'AGENT_BUSY', 'compaction runs only while the agent is idle');
  const result = await run(agent);
  return { body: { result: result ?? null, state: context.hub.state(agent.id) } };
}

async function setModel(
  context: ApiContext,
  [sessionId]: readonly string[],
  body: unknown,
): Promise<ApiAnswer> {
  const fields = objectBody(body);
  const provider = optionalString(fields, 'provider');
  const model = optionalString(fields, 'model');
  if (provider === undefined || model === undefined) {
    throw new HttpError(400, 'INVALID_REQUEST', 'provider and model are required');
  }
  requireProvider(context.harness, provider);
  const reasoningEffort = reasoningEffortField(fields);
  const agent = await context.live(sessionId!);
  context.hub.setRoute(agent.id, {
    provider,
    model,
    ...(reasoningEffort !== undefined ? { reasoningEffort } : {}),
  });
  return { body: { state: context.hub.state(agent.id) } };
}

async function getSettings(context: ApiContext): Promise<ApiAnswer> {
  const settings = context.options.settings;
  if (settings === undefined) {
    return {
      body: {
        providers: context.harness.llm.providers().map((provider) => ({ provider, configured: true })),
        help: 'Keys are read from Rein’s config. Run `rein config set-key <provider>` in a terminal, or set the provider’s API-key environment variable, then restart `rein web`.',
        editable: false,
      },
    };
  }
  return {
    body: {
      ...(await settings.describe()),
      editable: settings.setProviderKey !== undefined,
      approvalModeEditable: settings.setApprovalMode !== undefined,
    },
  };
}

async function setKey(context: ApiContext, [provider]: readonly string[], body: unknown): Promise<ApiAnswer> {
  const setter = context.options.settings?.setProviderKey;
  if (setter === undefined)
    throw new HttpError(501, 'SETTINGS_READ_ONLY', 'keys cannot be changed from this server');
  const key = objectBody(body).key;
  if (typeof key !== 'string' || key.trim() === '' || key.length > 4096) {
    throw new HttpError(400, 'INVALID_REQUEST', 'key must be a non-empty string');
  }
  await setter.call(context.options.settings, provider!, key.trim());
  // The key is never echoed: the answer is the redacted view.
  return getSettings(context);
}

async function setApprovalMode(
  context: ApiContext,
  _params: readonly string[],
  body: unknown,
): Promise<ApiAnswer> {
  const setter = context.options.settings?.setApprovalMode;
  if (setter === undefined) {
    throw new HttpError(501, 'SETTINGS_READ_ONLY', 'the approval mode cannot be changed from this server');
  }
  const mode = objectBody(body).mode;
  if (typeof mode !== 'string' || mode === '')
    throw new HttpError(400, 'INVALID_REQUEST', 'mode is required');
  await setter.call(context.options.settings, mode);
  return getSettings(context);
}

async function summaryOf(context: ApiContext, sessionId: string): Promise<SessionSummary> {
  const agent = context.harness.agents.get(sessionId);
  if (agent !== undefined) return summarizeSession(agent.session.header, agent.session.events);
  // Throws SESSION_NOT_FOUND (404) for an unknown id; reads one log, never the whole store.
  const { header, events } = await context.harness.store.read(sessionId);
  return summarizeSession(header, events);
}

function liveOrThrow(context: ApiContext, sessionId: string): Agent {
  const agent = context.harness.agents.get(sessionId);
  if (agent === undefined) {
    throw new HttpError(
      404,
      'SESSION_NOT_LIVE',
      `session ${sessionId} has no live agent (nothing is queued)`,
    );
  }
  return agent;
}

function requireProvider(harness: Harness, provider: string): void {
  if (harness.llm.adapter(provider) === undefined) {
    throw new HttpError(400, 'NO_ADAPTER', `no provider '${provider}' is configured`);
  }
}

/** Parses a `from` / `Last-Event-ID` style seq: a non-negative integer, 0 when absent. */
export function seqParameter(value: string | null | undefined): number {
  if (value === null || value === undefined || value === '') return 0;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0) {
    throw new HttpError(400, 'INVALID_REQUEST', `'${value}' is not a log position`);
  }
  return parsed;
}

/**
 * The refusal for a session working in `cwd` on a server whose tools are bound to `workspace`, or
 * undefined when they agree (or the server binds none).
 */
export function workspaceMismatch(
  workspace: string | undefined,
  cwd: string | undefined,
): HttpError | undefined {
  if (workspace === undefined || cwd === undefined || resolve(cwd) === resolve(workspace)) return undefined;
  return new HttpError(
    409,
    'WORKSPACE_MISMATCH',
    `the session works in ${resolve(cwd)}, but this server's tools work in ${resolve(workspace)}; ` +
      `start \`rein web --cwd ${resolve(cwd)}\` to continue it there`,
  );
}

/** Wraps a harness failure that means "this session is held elsewhere" in a clearer message. */
export function explainResumeFailure(sessionId: string, error: unknown): unknown {
  if (error instanceof HarnessError && error.code === 'SESSION_LOCKED') {
    return new HttpError(
      409,
      'SESSION_LOCKED',
      `session ${sessionId} is held by another Rein process; close it there (or wait for it to exit) and try again`,
      { cause: error },
    );
  }
  return error;
}
