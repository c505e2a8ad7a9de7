import type { HookBus } from '../hooks/index.ts';
import type { UserMessage } from '../llm/index.ts';
import { createUserMessage } from '../llm/index.ts';
import type { Session } from '../session/index.ts';
import type { ToolContext, ToolProgress } from './tool.ts';
import type { ToolExecution } from './tool-pipeline.ts';

// Progress reports closer together than this are dropped (a final one, progress equal to total, never is).
const progressIntervalMs = 100;

// The context a tool body receives. Its callbacks work unbound (tools pass them around) and are own
// properties (a tool may spread the context), so they are bound methods. They are not arrow closures made
// in the constructor: a context holding closures created for it survived the young generation's
// scavenges together with its call (arguments, tool, execution), which were then promoted to the old
// generation and left for a full collection.
/** The context a tool body receives for one call of `toolName`. */
export class CallContext implements ToolContext {
  readonly signal: AbortSignal;
  readonly callId: string;
  readonly sessionId: string;
  readonly turn: number;
  readonly step: number;
  readonly session: Session;
  readonly #execution: ToolExecution;
  readonly #toolName: string;
  readonly #hooks: HookBus;
  #lastReport = -Infinity;
  readonly deferContext: (message: UserMessage | string) => void;
  readonly concludeTurn: () => void;
  readonly reportProgress: (progress: ToolProgress) => void;

  constructor(execution: ToolExecution, toolName: string, hooks: HookBus) {
    const { call } = execution;
    this.signal = execution.signal;
    this.callId = call.callId;
    this.sessionId = call.sessionId;
    this.turn = call.turn;
    this.step = call.step;
    this.session = execution.session;
    this.#execution = execution;
    this.#toolName = toolName;
    this.#hooks = hooks;
    this.deferContext = this.#defer.bind(this);
    this.concludeTurn = this.#conclude.bind(this);
    this.reportProgress = this.#report.bind(this);
  }

  #defer(message: UserMessage | string): void {
    this.#execution.deferred.push(
      typeof message === 'string'
        ? createUserMessage(message, { kind: 'inject', origin: `tool:${this.#toolName}` })
        : message,
    );
  }

  #conclude(): void {
    this.#execution.concludes = true;
  }

  #report(progress: ToolProgress): void {
    const execution = this.#execution;
    if (execution.signal.aborted || !Number.isFinite(progress.progress)) return;
    const now = performance.now();
    const final = progress.total !== undefined && progress.progress >= progress.total;
    if (!final && now - this.#lastReport < progressIntervalMs) return;
    this.#lastReport = now;
    const report: { progress: number; total?: number; message?: string } = { progress: progress.progress };
    if (typeof progress.total === 'number' && Number.isFinite(progress.total)) report.total = progress.total;
    if (typeof progress.message === 'string') report.message = progress.message;
    const { call, session } = execution;
    const data = { turn: call.turn, step: call.step, callId: call.callId, ...report };
    session.append('tool/progress', data);
    this.#hooks.emit('tools/progress', { call, progress: report, session }, call.sessionId);
  }
}
