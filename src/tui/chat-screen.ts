import type { Component, TUI } from '@mariozechner/pi-tui';
import { Editor, SelectList, matchesKey, truncateToWidth, wrapTextWithAnsi } from '@mariozechner/pi-tui';
import type { InboxTarget, TranscriptItem } from '../index.ts';
import { HarnessError } from '../index.ts';
import { approvalLines } from './approval-panel.ts';
import type { ChatSession } from './chat-session.ts';
import { ComposerCompletion } from './composer-completion.ts';
import { attachMentions, mentionedPaths, workspaceFiles } from './mentions.ts';
import type { PromptTemplate } from './prompt-templates.ts';
import type { QueuedEntry } from './queue-panel.ts';
import { queueLines } from './queue-panel.ts';
import type { CommandContext, PickerItem } from './slash-commands.ts';
import { builtinCommands, runSlashCommand } from './slash-commands.ts';
import { statusFacts, statusLine } from './status-line.ts';
import { TranscriptLines } from './transcript-lines.ts';
import { TranscriptViewport } from './transcript-viewport.ts';
import type { LocalNotice, ScreenItem } from './screen-item.ts';
import type { TuiTheme } from './tui-theme.ts';
import type { PendingApproval } from './tui-approver.ts';

/** The smallest terminal the layout works in. */
export const minimumSize = { columns: 40, rows: 10 } as const;

/** How long a first Ctrl-C waits for the second. */
const doublePressMs = 2000;

interface Picker {
  title: string;
  list: SelectList;
}

/**
 * The full-screen chat: the transcript viewport on top, then the queue, an approval or picker when one
 * is open, the composer and the status line. Renders exactly the terminal's rows, so pi-tui's
 * differential renderer rewrites only the lines that changed; handles every key itself.
 */
export class ChatScreen implements Component {
  readonly #tui: TUI;
  readonly #chat: ChatSession;
  readonly #theme: TuiTheme;
  readonly #templates: readonly PromptTemplate[];
  readonly #editor: Editor;
  readonly #lines: TranscriptLines;
  readonly #viewport: TranscriptViewport;
  readonly #onExit: () => void;
  #items: ScreenItem[] = [];
  #known = 0;
  #notices = 0;
  #picker: Picker | undefined;
  #queueSelection: number | undefined;
  #denying: { draft: string } | undefined;
  #ctrlCAt = 0;
  #frame = 0;
  #files: Promise<readonly string[]> | undefined;
  #lastWidth = 80;

  constructor(options: {
    tui: TUI;
    chat: ChatSession;
    theme: TuiTheme;
    templates: readonly PromptTemplate[];
    onExit: () => void;
  }) {
    this.#tui = options.tui;
    this.#chat = options.chat;
    this.#theme = options.theme;
    this.#templates = options.templates;
    this.#onExit = options.onExit;
    this.#editor = new Editor(this.#tui, this.#theme.editor, { paddingX: 1 });
    this.#editor.focused = true;
    this.#editor.onSubmit = (text) => this.#submitted(text, 'next-step');
    this.#editor.setAutocompleteProvider(
      new ComposerCompletion({
        commands: () => [
          ...builtinCommands.map((command) => ({
            value: command.name,
            label: command.name,
            description: command.description,
          })),
          ...this.#templates.map((template) => ({
            value: template.name,
            label: template.name,
            description: template.description,
          })),
        ],
        files: (signal) => (this.#files ??= workspaceFiles(this.#chat.workspace, 5000, signal)),
      }),
    );
    this.#lines = new TranscriptLines(this.#theme, {
      keyArgument: (name, raw) => this.#keyArgument(name, raw),
    });
    this.#viewport = new TranscriptViewport(this.#lines, this.#theme);
    this.#sync();
  }

  /** The transcript reported changed items (or status, inbox, approvals changed): redraw soon. */
  changed(items: readonly TranscriptItem[]): void {
    this.#lines.invalidate(items);
    this.#sync();
    this.#tui.requestRender();
  }

  /** The session was swapped: rebuild everything from the new transcript. */
  replaced(): void {
    this.#lines.clear();
    this.#items = this.#items.filter((item) => item.kind === 'local');
    this.#known = 0;
    this.#sync();
    this.#viewport.follow();
    this.#tui.requestRender();
  }

  /** Advances the spinner (and a retry countdown). */
  tick(): void {
    this.#frame++;
    if (this.#chat.agent.status === 'running' || this.#chat.retryUntil !== undefined)
      this.#tui.requestRender();
  }

  /** Adds a line to the screen that is not part of the session's log. */
  notice(text: string, tone: 'info' | 'error' = 'info'): void {
    const item: LocalNotice = { kind: 'local', key: `local-${this.#notices++}`, text, tone };
    this.#items.push(item);
    this.#viewport.follow();
    this.#tui.requestRender();
  }

  invalidate(): void {
    this.#lines.clear();
    this.#editor.invalidate();
  }

  render(width: number): string[] {
    this.#lastWidth = width;
    const rows = this.#tui.terminal.rows;
    if (width < minimumSize.columns || rows < minimumSize.rows) return this.#tooSmall(width, rows);
    const t = this.#theme;
    const bottom: string[] = [];
    const queue = queueLines({ entries: this.#queue(), selected: this.#queueSelection, theme: t, width });
    bottom.push(...queue);
    const pending = this.#chat.approver.pending;
    if (this.#picker !== undefined) {
      bottom.push(t.accent('─'.repeat(width)), truncateToWidth(t.bold(` ${this.#picker.title}`), width));
      bottom.push(...this.#picker.list.render(width));
      bottom.push(t.dim(truncateToWidth(' ↑↓ choose · Enter select · Esc cancel', width)));
    } else if (pending.length > 0) {
      bottom.push(
        ...approvalLines({
          request: pending[0]!.request,
          count: pending.length,
          mainSession: this.#chat.agent.id,
          theme: t,
          width,
          maxLines: Math.max(6, Math.floor(rows / 2) - queue.length),
        }),
      );
      if (this.#denying !== undefined) {
        bottom.push(t.warning(' Why not? (the model reads this; Enter denies, Esc goes back)'));
        bottom.push(...this.#editor.render(width));
      }
    }
    if (pending.length === 0 || this.#denying === undefined) {
      if (this.#picker === undefined && pending.length === 0) bottom.push(...this.#editor.render(width));
    }
    bottom.push(statusLine(statusFacts(this.#chat, Date.now()), t, width, this.#frame));
    const height = Math.max(0, rows - bottom.length);
    const top = this.#viewport.render(this.#items, width, height);
    return [...top, ...bottom].slice(-rows).map((line) => truncateToWidth(line, width));
  }

  handleInput(data: string): void {
    if (matchesKey(data, 'ctrl+c')) return this.#ctrlC();
    if (data.startsWith('\x1b[200~') && looksBinary(data)) {
      this.notice(
        `The pasted data looks binary (${data.length - 12} characters with control bytes); it was not inserted. ` +
          'Attach a file with @path instead.',
        'error',
      );
      return;
    }
    if (this.#picker !== undefined) {
      if (matchesKey(data, 'escape')) this.#picker = undefined;
      else this.#picker.list.handleInput(data);
      return this.#tui.requestRender();
    }
    if (this.#scrollKey(data)) return;
    const pending = this.#chat.approver.pending[0];
    if (pending !== undefined) return this.#approvalKey(data, pending);
    if (this.#queueSelection !== undefined) return this.#queueKey(data);
    if (matchesKey(data, 'escape') && !this.#editor.isShowingAutocomplete()) {
      if (this.#chat.agent.status === 'running') {
        this.#chat.cancel();
        this.notice('Stopping the turn… (what you queued stays queued)');
      }
      return;
    }
    if (matchesKey(data, 'shift+tab')) {
      if (this.#queue().length > 0) this.#queueSelection = 0;
      return this.#tui.requestRender();
    }
    if (matchesKey(data, 'alt+enter') || data === '\x11') {
      const text = this.#editor.getExpandedText().trim();
      if (text === '') return;
      this.#editor.setText('');
      this.#submitted(text, 'next-turn');
      return;
    }
    this.#editor.handleInput(data);
  }

  #ctrlC(): void {
    const now = Date.now();
    if (now - this.#ctrlCAt < doublePressMs) return this.#onExit();
    this.#ctrlCAt = now;
    if (this.#editor.getText() !== '') this.#editor.setText('');
    this.notice('Press Ctrl-C again to quit (the session stays resumable).');
  }

  #scrollKey(data: string): boolean {
    const page = Math.max(1, this.#tui.terminal.rows - 8);
    const items = this.#items;
    if (matchesKey(data, 'pageUp') || matchesKey(data, 'shift+up')) {
      this.#viewport.scroll(items, matchesKey(data, 'pageUp') ? -page : -1, this.#lastWidth);
    } else if (matchesKey(data, 'pageDown') || matchesKey(data, 'shift+down')) {
      this.#viewport.scroll(items, matchesKey(data, 'pageDown') ? page : 1, this.#lastWidth);
    } else if (matchesKey(data, 'end') && !this.#viewport.following) {
      this.#viewport.follow();
    } else return false;
    this.#tui.requestRender();
    return true;
  }

  #approvalKey(data: string, pending: PendingApproval): void {
    if (this.#denying !== undefined) {
      if (matchesKey(data, 'escape')) {
        this.#editor.setText(this.#denying.draft);
        this.#denying = undefined;
      } else if (matchesKey(data, 'enter')) {
        const reason = this.#editor.getExpandedText().trim();
        this.#editor.setText(this.#denying.draft);
        this.#denying = undefined;
        pending.answer(reason === '' ? { decision: 'deny' } : { decision: 'deny', reason });
      } else this.#editor.handleInput(data);
      return this.#tui.requestRender();
    }
    if (matchesKey(data, 'escape')) {
      if (this.#chat.agent.status === 'running') this.#chat.cancel();
      // A question of no turn (an @mention) ends here; a turn's own resolves through the cancellation.
      pending.answer({ decision: 'aborted' });
      this.notice('Stopped: the call was not run (what you queued stays queued).');
      return;
    }
    switch (data.toLowerCase()) {
      case 'y':
        return pending.answer({ decision: 'allow-once' });
      case 'a':
        return pending.answer({ decision: 'allow-session' });
      case 'n':
        this.#denying = { draft: this.#editor.getText() };
        this.#editor.setText('');
        return this.#tui.requestRender();
      default:
        return;
    }
  }

  #queueKey(data: string): void {
    const entries = this.#queue();
    const selected = Math.min(this.#queueSelection ?? 0, entries.length - 1);
    const entry = entries[selected];
    const inbox = this.#chat.agent.inbox;
    if (entry === undefined || matchesKey(data, 'escape') || matchesKey(data, 'shift+tab')) {
      this.#queueSelection = undefined;
    } else if (matchesKey(data, 'up')) {
      this.#queueSelection = Math.max(0, selected - 1);
    } else if (matchesKey(data, 'down')) {
      this.#queueSelection = Math.min(entries.length - 1, selected + 1);
    } else if (matchesKey(data, 'delete') || matchesKey(data, 'backspace') || data === 'd' || data === 'x') {
      inbox.remove(entry.message.id);
      this.notice(`Removed from the queue: ${oneLine(entry.message)}`);
    } else if (matchesKey(data, 'enter') || data === 's') {
      if (this.#chat.agent.status === 'running') inbox.move(entry.message.id, 'next-step');
      else {
        // Idle: "send now" starts the turn that takes it.
        inbox.remove(entry.message.id);
        this.#deliver(entry.message.content, 'next-turn').catch((error: unknown) => {
          const code = error instanceof HarnessError ? error.code : 'SEND_FAILED';
          this.notice(
            `Not sent — ${code}: ${error instanceof Error ? error.message : String(error)}`,
            'error',
          );
        });
      }
      this.notice(`Sent now: ${oneLine(entry.message)}`);
    } else if (data === 'e') {
      inbox.remove(entry.message.id);
      this.#editor.setText(textOfMessage(entry.message));
      this.#queueSelection = undefined;
    }
    if (this.#queueSelection !== undefined && this.#queue().length === 0) this.#queueSelection = undefined;
    this.#tui.requestRender();
  }

  #submitted(text: string, target: InboxTarget): void {
    const trimmed = text.trim();
    if (trimmed === '') return;
    this.#editor.addToHistory(trimmed);
    if (trimmed.startsWith('/') && !trimmed.startsWith('//')) {
      void this.#command(trimmed);
      return;
    }
    void this.#send(trimmed, target);
  }

  async #command(line: string): Promise<void> {
    const known = await runSlashCommand(line, this.#templates, this.#commandContext());
    if (!known) {
      const name = line.split(/\s/)[0]!;
      this.#editor.setText(line);
      this.notice(
        `Unknown command ${name} — /help lists the commands. Your text is back in the composer.`,
        'error',
      );
    }
    this.#tui.requestRender();
  }

  async #send(text: string, target: InboxTarget): Promise<void> {
    const chat = this.#chat;
    try {
      if (mentionedPaths(text).length === 0) {
        await this.#deliver(text, target);
        return;
      }
      const controller = new AbortController();
      const { content, outcomes } = await attachMentions(text, {
        workspace: chat.workspace,
        mode: chat.mode,
        approvals: chat.harness.approvals,
        sessionId: chat.agent.id,
        signal: controller.signal,
        images: chat.acceptsImages(),
        ...(chat.imageBytes() !== undefined ? { imageBytes: chat.imageBytes()! } : {}),
      });
      for (const outcome of outcomes) {
        if (outcome.attached) this.notice(`Attached ${outcome.display} (${outcome.bytes} bytes).`);
        else this.notice(`@${outcome.path} was not attached — ${outcome.code}: ${outcome.reason}`, 'error');
      }
      await this.#deliver(content, target);
    } catch (error) {
      const code = error instanceof HarnessError ? error.code : 'SEND_FAILED';
      this.#editor.setText(text);
      this.notice(`Not sent — ${code}: ${error instanceof Error ? error.message : String(error)}`, 'error');
    }
  }

  /** Hands a prompt to the session; a log that cannot save it is reported (the message stays queued). */
  async #deliver(content: Parameters<ChatSession['send']>[0], target: InboxTarget): Promise<void> {
    try {
      await this.#chat.send(content, target);
    } catch (error) {
      // Anything but a failed checkpoint means the message was not queued: the caller reports it.
      if (!(error instanceof HarnessError) || error.code !== 'CHECKPOINT_FAILED') throw error;
      const code = error.code;
      this.notice(`Queued, but the session log could not save it — ${code}: ${error.message}`, 'error');
      this.#tui.requestRender();
    }
  }

  #commandContext(): CommandContext {
    return {
      chat: this.#chat,
      notice: (text, tone) => this.notice(text, tone),
      pick: (title, items, choose) => this.#openPicker(title, items, choose),
      submit: (text) => this.#send(text, 'next-step'),
      exit: () => this.#onExit(),
    };
  }

  #openPicker(title: string, items: readonly PickerItem[], choose: (value: string) => Promise<void>): void {
    const list = new SelectList(
      items.map((item) => ({ ...item })),
      Math.max(3, Math.min(10, this.#tui.terminal.rows - 10)),
      this.#theme.editor.selectList,
    );
    list.onSelect = (item) => {
      this.#picker = undefined;
      choose(item.value).catch((error: unknown) => {
        const code = error instanceof HarnessError ? error.code : 'COMMAND_FAILED';
        this.notice(
          `${title} failed — ${code}: ${error instanceof Error ? error.message : String(error)}`,
          'error',
        );
      });
      this.#tui.requestRender();
    };
    list.onCancel = () => {
      this.#picker = undefined;
      this.#tui.requestRender();
    };
    this.#picker = { title, list };
    this.#tui.requestRender();
  }

  #queue(): QueuedEntry[] {
    const inbox = this.#chat.agent.inbox;
    return [
      ...inbox.list('next-step').map((message) => ({ target: 'next-step' as const, message })),
      ...inbox.list('next-turn').map((message) => ({ target: 'next-turn' as const, message })),
    ];
  }

  /** Appends the transcript's new items after what is on screen (local notices keep their place). */
  #sync(): void {
    const items = this.#chat.transcript.items;
    for (; this.#known < items.length; this.#known++) this.#items.push(items[this.#known]!);
  }

  #keyArgument(name: string, raw: string): string | undefined {
    let args: unknown;
    try {
      args = JSON.parse(raw);
    } catch {
      // Arguments still streaming (or broken) name nothing yet.
      return undefined;
    }
    const tool = this.#chat.harness.tools.get(name);
    try {
      const command = tool?.command?.(args as never);
      if (command !== undefined) return `$ ${command}`;
      const paths = tool?.paths?.(args as never) ?? [];
      if (paths.length > 0) return paths.join(', ');
    } catch {
      // A tool whose declarations reject these arguments: fall back to the first string argument.
    }
    if (typeof args !== 'object' || args === null) return undefined;
    const first = Object.values(args).find((value) => typeof value === 'string');
    return typeof first === 'string' ? first : undefined;
  }

  #tooSmall(width: number, rows: number): string[] {
    const message = wrapTextWithAnsi(
      `The terminal is ${width}×${rows}; Rein needs at least ${minimumSize.columns}×${minimumSize.rows}. ` +
        'Make it larger — nothing is lost meanwhile.',
      Math.max(1, width),
    );
    const lines = Array.from({ length: rows }, () => '');
    for (let index = 0; index < message.length && index < rows; index++) lines[index] = message[index]!;
    return lines.map((line) => truncateToWidth(line, Math.max(1, width)));
  }
}

function oneLine(message: { content: readonly { type: string }[] }): string {
  const text = textOfMessage(message).replace(/\s*\n\s*/g, ' ');
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

function textOfMessage(message: { content: readonly { type: string; text?: string }[] }): string {
  return message.content.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('');
}

/** True when a bracketed paste carries NUL or other control bytes a text would not have. */
export function looksBinary(paste: string): boolean {
  const body = paste.replace(/^\x1b\[200~/, '').replace(/\x1b\[201~$/, '');

  const control = body.match(/[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]|\ufffd/g)?.length ?? 0;
  return body.includes('\0') || control > Math.max(2, body.length * 0.01);
}
