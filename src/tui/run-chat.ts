import type { Terminal } from '@mariozechner/pi-tui';
import { ProcessTerminal, TUI } from '@mariozechner/pi-tui';
import type { TranscriptItem } from '../index.ts';
import { reinWarningLine } from '../internal.ts';
import type { ChatListener, ChatOpenOptions } from './chat-session.ts';
import { ChatSession } from './chat-session.ts';
import { ChatScreen } from './chat-screen.ts';
import { OpeningScreen } from './opening-screen.ts';
import { loadPromptTemplates } from './prompt-templates.ts';
import { tuiTheme } from './tui-theme.ts';

/** Options of `runChat`. */
export interface RunChatOptions extends ChatOpenOptions {
  /** The terminal to draw on; the process's own when omitted. */
  readonly terminal?: Terminal;
  /** Where the closing line (the session id to resume) goes once the screen is left. */
  readonly report?: (line: string) => void;
  /** Ends the chat as quitting does (an embedding app closing it). */
  readonly signal?: AbortSignal;
}

const enterAlternateScreen = '\x1b[?1049h\x1b[H\x1b[2J';
const leaveAlternateScreen = '\x1b[?1049l';

/**
 * Runs the interactive chat until the user quits (Ctrl-C twice, `/quit`, SIGTERM/SIGHUP): opens the
 * session, takes over the terminal's alternate screen, and on the way out cancels a running turn as the
 * user (the queue is kept in the log), flushes and releases the session, restores the terminal and
 * reports how to resume. Resolves the exit code.
 */
export async function runChat(options: RunChatOptions): Promise<number> {
  let screen: ChatScreen | undefined;
  const listener: ChatListener = {
    changed: (items: readonly TranscriptItem[]) => screen?.changed(items),
    replaced: () => screen?.replaced(),
  };
  const theme = tuiTheme(options.env);
  const terminal = options.terminal ?? new ProcessTerminal();
  const tui = new TUI(terminal);
  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    terminal.write(enterAlternateScreen);
    tui.start();
  };
  let chat: ChatSession;
  let opening: OpeningScreen | undefined;
  try {
    // A stored session's tail is on screen while it is opened for writing (repair, lock).
    chat = await ChatSession.open(options, listener, (transcript, id) => {
      opening = new OpeningScreen({ tui, transcript, theme, id });
      tui.addChild(opening);
      tui.setFocus(opening);
      start();
    });
  } catch (error) {
    if (started) {
      tui.stop();
      terminal.write(leaveAlternateScreen);
    }
    throw error;
  }
  const resumed = chat.agent.session.firstLiveSeq > 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  screen = new ChatScreen({
    tui,
    chat,
    theme,
    templates: await loadPromptTemplates(chat.harness.cwd),
    onExit: () => finish(),
  });
  const onSignal = (): void => finish();
  const signals = ['SIGTERM', 'SIGHUP', 'SIGINT'] as const;
  for (const signal of signals) process.on(signal, onSignal);
  if (options.signal?.aborted === true) finish();
  options.signal?.addEventListener('abort', onSignal, { once: true });
  tui.clear();
  tui.addChild(screen);
  tui.setFocus(screen);
  start();
  // Keys typed while the session was being opened go to the chat, in order.
  for (const data of opening?.typed ?? []) screen.handleInput(data);
  tui.requestRender();
  const ticker = setInterval(() => screen?.tick(), 100);
  try {
    for (const warning of chat.harness.warnings) screen.notice(reinWarningLine(warning), 'error');
    if (resumed) {
      screen.notice(
        `Resumed session ${chat.agent.id} (${chat.transcript.turns.length} turns with model calls).`,
      );
    } else if (chat.harness.usingDemo && options.model === undefined) {
      for (const notice of chat.harness.notices) screen.notice(notice);
    }
    screen.notice('Type a prompt and press Enter · /help lists commands and keys · Ctrl-C twice quits.');
    await finished;
  } finally {
    clearInterval(ticker);
    for (const signal of signals) process.off(signal, onSignal);
    options.signal?.removeEventListener('abort', onSignal);
    const id = chat.agent.id;
    try {
      if (chat.agent.status === 'running') chat.cancel();
      await chat.close();
    } finally {
      tui.stop();
      terminal.write(leaveAlternateScreen);
      options.report?.(`Session ${id} · resume with: rein --resume ${id}`);
    }
  }
  return 0;
}
