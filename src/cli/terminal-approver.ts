import type { ApprovalDecision, ApprovalRequest, Approver } from '../index.ts';
import type { CliIo } from './cli-io.ts';

/**
 * Asks approvals on the terminal, one at a time: allow once, allow for this session, or deny with an
 * optional reason. Ctrl-C while asking is the run's SIGINT: it cancels the turn, and the question resolves aborted.
 */
export class TerminalApprover implements Approver {
  readonly #io: CliIo;
  readonly #mainSession: string;
  readonly #before: () => void;
  #queue: Promise<void> = Promise.resolve();

  constructor(options: { io: CliIo; mainSession: string; beforePrompt?: () => void }) {
    this.#io = options.io;
    this.#mainSession = options.mainSession;
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
    // Node's readline loads with the first question: a run that asks none does not pay for it.
    const { createInterface } = await import('node:readline');
    if (signal.aborted) return { decision: 'aborted' };
    this.#before();
    const out = this.#io.stderr;
    const who = request.sessionId === this.#mainSession ? '' : ` (subagent ${request.sessionId.slice(0, 8)})`;
    out.write(`\n? ${request.name} needs your approval${who}\n`);
    if (request.preview !== undefined) {
      out.write(`  ${request.preview.created ? 'new file' : 'changes to'} ${request.preview.path}:\n`);
      for (const line of diffLines(
        request.preview.diff,
        out.isTTY === true && this.#io.env.NO_COLOR === undefined,
      ))
        out.write(`    ${line}\n`);
    } else {
      out.write(`  arguments: ${prettyArguments(request.arguments)}\n`);
    }
    if (request.reason !== undefined) out.write(`  reason:    ${request.reason}\n`);
    // Cooked mode: the terminal echoes and edits the line, and Ctrl-C stays a real SIGINT (the run's handler).
    const rl = createInterface({ input: this.#io.stdin, terminal: false });
    const lines: string[] = [];
    let waiting: ((line: string | undefined) => void) | undefined;
    rl.on('line', (line) => {
      if (waiting !== undefined) {
        const resolve = waiting;
        waiting = undefined;
        resolve(line);
      } else lines.push(line);
    });
    rl.on('close', () => waiting?.(undefined));
    const onAbort = (): void => waiting?.(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    const question = (prompt: string): Promise<string | undefined> => {
      out.write(prompt);
      const buffered = lines.shift();
      if (buffered !== undefined) return Promise.resolve(buffered);
      if (signal.aborted) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        waiting = resolve;
      });
    };
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
      signal.removeEventListener('abort', onAbort);
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

const maxPreviewLines = 80;

/** A unified diff's lines without its file header, colored on a terminal, cut at a screenful. */
function diffLines(diff: string, color: boolean): string[] {
  const lines = diff
    .split('\n')
    .filter((line) => !/^(Index: |={10,}|--- |\+\+\+ )/.test(line))
    .filter((line, index, all) => line !== '' || index < all.length - 1);
  const shown = lines.slice(0, maxPreviewLines).map((line) => (color ? colorDiffLine(line) : line));
  if (lines.length > maxPreviewLines) shown.push(`… (${lines.length - maxPreviewLines} more lines)`);
  return shown;
}

function colorDiffLine(line: string): string {
  if (line.startsWith('+')) return `\x1b[32m${line}\x1b[0m`;
  if (line.startsWith('-')) return `\x1b[31m${line}\x1b[0m`;
  if (line.startsWith('@@')) return `\x1b[36m${line}\x1b[0m`;
  return line;
}
