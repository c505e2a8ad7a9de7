import { createInterface } from 'node:readline';
import type { ApprovalDecision, ApprovalRequest, Approver } from '../index.ts';
import type { CliIo } from './cli-io.ts';

/**
 * Asks approvals on the terminal, one at a time: allow once, allow for this session, or deny with an
 * optional reason. Ctrl-C while asking is passed to `onInterrupt` (the run cancels the turn).
 */
export class TerminalApprover implements Approver {
  readonly #io: CliIo;
  readonly #mainSession: string;
  readonly #onInterrupt: () => void;
  readonly #before: () => void;
  #queue: Promise<void> = Promise.resolve();

  constructor(options: {
    io: CliIo;
    mainSession: string;
    onInterrupt: () => void;
    beforePrompt?: () => void;
  }) {
    this.#io = options.io;
    this.#mainSession = options.mainSession;
    this.#onInterrupt = options.onInterrupt;
    this.#before = options.beforePrompt ?? (() => undefined);
  }

  notify(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    const answer = this.#queue.then(() => this.#ask(request, signal));
    this.#queue = answer.then(
      () => undefined,
      () => undefined,
    );
    return answer;
  }

  async #ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    if (signal.aborted) return { decision: 'aborted' };
    this.#before();
    const out = this.#io.stderr;
    const who = request.sessionId === this.#mainSession ? '' : ` (subagent ${request.sessionId.slice(0, 8)})`;
    out.write(`\n? ${request.name} needs your approval${who}\n`);
    out.write(`  arguments: ${prettyArguments(request.arguments)}\n`);
    if (request.reason !== undefined) out.write(`  reason:    ${request.reason}\n`);
    const rl = createInterface({
      input: this.#io.stdin,
      output: this.#io.stderr as NodeJS.WritableStream,
      terminal: true,
    });
    const question = (prompt: string): Promise<string | undefined> =>
      new Promise((resolve) => {
        const onAbort = (): void => resolve(undefined);
        signal.addEventListener('abort', onAbort, { once: true });
        rl.question(prompt, (text) => {
          signal.removeEventListener('abort', onAbort);
          resolve(text);
        });
      });
    rl.on('SIGINT', () => {
      rl.close();
      this.#onInterrupt();
    });
    try {
      for (;;) {
        const choice = await question('  [y] allow once  [a] allow for this session  [n] deny  > ');
        if (choice === undefined || signal.aborted) return { decision: 'aborted' };
        switch (choice.trim().toLowerCase()) {
          case 'y':
          case 'yes':
            return { decision: 'allow-once' };
          case 'a':
          case 'always':
            return { decision: 'allow-session' };
          case 'n':
          case 'no': {
            const reason = await question('  reason for the model (optional): ');
            if (reason === undefined || signal.aborted) return { decision: 'aborted' };
            return reason.trim() === '' ? { decision: 'deny' } : { decision: 'deny', reason: reason.trim() };
          }
          default:
            out.write('  please answer y, a or n\n');
        }
      }
    } finally {
      rl.close();
    }
  }
}

function prettyArguments(raw: string): string {
  let text = raw;
  try {
    text = JSON.stringify(JSON.parse(raw));
  } catch {
    // Unparsable arguments are shown as the model wrote them.
  }
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}
