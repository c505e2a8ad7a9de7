import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnySessionEvent } from '../../src/index.ts';
import { DiskSessionStore } from '../../src/index.ts';
import type { Sandbox } from '../cli/rein-process.ts';
import { sandbox } from '../cli/rein-process.ts';
import type { FakeScript, FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { TuiTerminal } from './tui-terminal.ts';

/** A sandbox with a workspace, a scripted vendor on loopback, and TUIs started against both. */
export interface TuiFixture {
  readonly box: Sandbox;
  readonly server: FakeServer;
  /** Starts `rein` (the chat unless told otherwise) on a fresh pseudo-terminal. */
  start(
    args?: readonly string[],
    size?: { cols: number; rows: number },
    env?: Record<string, string>,
  ): TuiTerminal;
  /** The durable events of a stored session. */
  events(id: string): Promise<AnySessionEvent[]>;
  /** The ids of the stored sessions. */
  sessionIds(): string[];
  close(): Promise<void>;
}

/** Creates the fixture: README.md in the workspace, the scripted vendor serving `script`. */
export async function tuiFixture(script: FakeScript): Promise<TuiFixture> {
  const box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Project\n\nA test project.\n');
  const server = await startFakeOpenAIServer(script);
  const terminals: TuiTerminal[] = [];
  return {
    box,
    server,
    start(args = [], size = { cols: 100, rows: 30 }, env = {}) {
      const terminal = new TuiTerminal(args, {
        cwd: box.workspace,
        cols: size.cols,
        rows: size.rows,
        env: {
          ...box.env,
          DEEPSEEK_API_KEY: 'sk-tui-test',
          DEEPSEEK_BASE_URL: server.url,
          REIN_MODEL: 'deepseek/deepseek-chat',
          ...env,
        },
      });
      terminals.push(terminal);
      return terminal;
    },
    async events(id) {
      const store = new DiskSessionStore({ root: join(box.home, 'sessions') });
      return (await store.read(id)).events;
    },
    sessionIds() {
      try {
        return readdirSync(join(box.home, 'sessions'))
          .filter((name) => name.endsWith('.jsonl'))
          .map((name) => name.replace(/\.jsonl$/, ''));
      } catch {
        // No session was stored yet.
        return [];
      }
    },
    async close() {
      for (const terminal of terminals) {
        try {
          terminal.kill();
        } catch {
          // Already gone.
        }
      }
      await server.close();
      box.cleanup();
    },
  };
}

/** Quits a TUI with Ctrl-C twice and returns the session id it reported. */
export async function quit(terminal: TuiTerminal): Promise<void> {
  terminal.type('\x03');
  await terminal.waitFor('Press Ctrl-C again');
  terminal.type('\x03');
  await terminal.exited();
}
