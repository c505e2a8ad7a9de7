// `npm run bench:tui`: the terminal UI under load, on a virtual terminal (pi-tui's Terminal interface),
// each figure beside a baseline measured in the same run:
//   1. 100,000 text deltas streamed through the loop into the TUI: deltas absorbed per second (target
//      ≥ 100,000/s) and redraws per second (target ≤ 60/s); baseline: the same stream with no TUI.
//   2. Keystroke-to-echo latency while a stream runs (target: median ≤ 16 ms); baseline: while idle.
//   3. Opening a stored 5,000-step session with its tail on screen (target ≤ 0.5 s); baseline: the SDK's
//      own resumeAgent of the same session.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { Terminal } from '@mariozechner/pi-tui';
import { TUI } from '@mariozechner/pi-tui';
import type {
  AnySessionEvent,
  LlmAdapter,
  LlmRequest,
  ModelInfo,
  StreamChunk,
  TranscriptItem,
} from '../src/index.ts';
import { Transcript, createReinHarness, defaultRecordViews, defineTool } from '../src/index.ts';
import { ChatScreen, ChatSession, runChat, tuiTheme } from '../src/tui/index.ts';
import { formatNumber, markdownTable, median } from './stats.ts';

const deltaCount = 100_000;
const keystrokes = 60;
const resumeSteps = 5_000;
const model: ModelInfo = { contextWindow: 128_000 };
// The long session must not be compacted on the way: its model has a window far larger than the log.
const hugeModel: ModelInfo = { contextWindow: 100_000_000 };

/** A model that streams `deltas` short text deltas (endless when Infinity), yielding to timers now and then. */
class BurstModel implements LlmAdapter {
  readonly provider = 'burst';
  readonly deltas: number;
  constructor(deltas: number) {
    this.deltas = deltas;
  }
  listModels(): readonly string[] {
    return ['m'];
  }
  describeModel(): ModelInfo {
    return model;
  }
  async *stream(_request: LlmRequest, signal: AbortSignal): AsyncGenerator<StreamChunk> {
    yield { type: 'block-start', index: 0, blockType: 'text' };
    let text = '';
    for (let index = 0; index < this.deltas && !signal.aborted; index++) {
      const delta = index % 12 === 11 ? 'lorem\n\n' : 'lorem ';
      if (Number.isFinite(this.deltas)) text += delta;
      yield { type: 'text-delta', index: 0, text: delta };
      // A real stream arrives in network reads: let timers (and so redraws) run between bursts.
      if (index % 200 === 199) await yieldToEvents();
    }
    yield { type: 'block-end', index: 0, block: { type: 'text', text } };
    yield { type: 'usage', usage: { inputTokens: 10, outputTokens: 10 } };
    yield { type: 'finish', reason: { kind: 'stop' } };
  }
}

/** A terminal that only counts: frames (synchronized-output blocks), bytes, and the latest write. */
class CountingTerminal implements Terminal {
  frames = 0;
  bytes = 0;
  onWrite: ((data: string) => void) | undefined;
  #input: ((data: string) => void) | undefined;
  start(onInput: (data: string) => void): void {
    this.#input = onInput;
  }
  stop(): void {}
  async drainInput(): Promise<void> {}
  write(data: string): void {
    if (data.includes('\x1b[?2026h')) this.frames++;
    this.bytes += data.length;
    this.onWrite?.(data);
  }
  type(data: string): void {
    this.#input?.(data);
  }
  get columns(): number {
    return 100;
  }
  get rows(): number {
    return 30;
  }
  get kittyProtocolActive(): boolean {
    return false;
  }
  moveBy(): void {}
  hideCursor(): void {}
  showCursor(): void {}
  clearLine(): void {}
  clearFromCursor(): void {}
  clearScreen(): void {}
  setTitle(): void {}
  setProgress(): void {}
}

const root = mkdtempSync(join(tmpdir(), 'rein-bench-tui-'));
const home = join(root, 'home');
const env = { NO_COLOR: undefined, TERM: 'xterm-256color' };

async function openTui(
  adapter: LlmAdapter,
  resumeId?: string,
): Promise<{ chat: ChatSession; tui: TUI; terminal: CountingTerminal; screen: ChatScreen }> {
  const terminal = new CountingTerminal();
  const tui = new TUI(terminal);
  let screen: ChatScreen | undefined;
  const chat = await ChatSession.open(
    {
      cwd: root,
      env,
      home,
      model: `${adapter.provider}/m`,
      approve: 'yolo',
      providers: [adapter],
      ...(resumeId !== undefined ? { resumeId } : {}),
    },
    {
      changed: (items: readonly TranscriptItem[]) => screen?.changed(items),
      replaced: () => screen?.replaced(),
    },
  );
  screen = new ChatScreen({ tui, chat, theme: tuiTheme(env), templates: [], onExit: () => undefined });
  tui.addChild(screen);
  tui.setFocus(screen);
  tui.start();
  return { chat, tui, terminal, screen };
}

async function close(opened: { chat: ChatSession; tui: TUI }): Promise<void> {
  opened.tui.stop();
  await opened.chat.close();
}

// 1. Streaming absorption. The loop itself (with its durable log) is measured end to end; the TUI's own
// absorption replays that run's durable events into the chat screen in bursts (as a stream arrives),
// against the bare transcript fold of the same events.
async function recordedStream(): Promise<{ events: AnySessionEvent[]; loopRate: number }> {
  const harness = await createReinHarness({
    cwd: root,
    home,
    env,
    model: 'burst/m',
    providers: [new BurstModel(deltaCount)],
  });
  const agent = await harness.createAgent({ cwd: root });
  const started = performance.now();
  agent.followup('go');
  await agent.whenIdle();
  const seconds = (performance.now() - started) / 1000;
  const events = agent.session.events.slice();
  await harness.dispose();
  return { events, loopRate: deltaCount / seconds };
}

function foldRate(events: readonly AnySessionEvent[]): number {
  const started = performance.now();
  const transcript = new Transcript({ views: defaultRecordViews });
  for (const event of events) transcript.apply(event);
  return deltaCount / ((performance.now() - started) / 1000);
}

async function tuiAbsorption(
  events: readonly AnySessionEvent[],
): Promise<{ perSecond: number; framesPerSecond: number; frames: number }> {
  const opened = await openTui(new BurstModel(0));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const transcript = opened.chat.transcript;
  const before = opened.terminal.frames;
  const started = performance.now();
  for (let index = 0; index < events.length; index++) {
    const touched = transcript.apply(events[index]!);
    if (touched !== undefined) opened.screen.changed(touched);
    // Deltas arrive in network reads of a few hundred at a time; timers (and redraws) run in between.
    if (index % 200 === 199) await yieldToEvents();
  }
  // Absorbed means on screen: wait for the frame that shows the end of the answer.
  await new Promise<void>((resolve) => {
    const check = (): void => {
      if (
        opened.terminal.frames > before &&
        !(opened.tui as unknown as { renderRequested: boolean }).renderRequested
      )
        resolve();
      else setTimeout(check, 1);
    };
    check();
  });
  const seconds = (performance.now() - started) / 1000;
  const frames = opened.terminal.frames - before;
  await close(opened);
  return { perSecond: deltaCount / seconds, framesPerSecond: frames / seconds, frames };
}

// 2. Keystroke to echo.
async function echoLatencies(streaming: boolean): Promise<number[]> {
  const opened = await openTui(new BurstModel(Number.POSITIVE_INFINITY));
  await new Promise((resolve) => setTimeout(resolve, 50));
  if (streaming) {
    await opened.chat.send('go', 'next-turn');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const latencies: number[] = [];
  for (let index = 1; index <= keystrokes; index++) {
    const echoed = 'q'.repeat(index);
    const latency = await new Promise<number>((resolve) => {
      const started = performance.now();
      opened.terminal.onWrite = (data) => {
        if (data.includes(echoed)) resolve(performance.now() - started);
      };
      opened.terminal.type('q');
    });
    latencies.push(latency);
    // People type a few keys a second, not in one burst.
    await new Promise((resolve) => setTimeout(resolve, 7 + (index % 5) * 3));
  }
  opened.terminal.onWrite = undefined;
  if (streaming) opened.chat.cancel();
  await opened.chat.agent.whenIdle();
  await close(opened);
  return latencies;
}

// 3. Resume of a long session.
async function longSession(): Promise<string> {
  let step = 0;
  const stepper: LlmAdapter = {
    provider: 'stepper',
    listModels: () => ['m'],
    describeModel: () => hugeModel,
    async *stream(): AsyncGenerator<StreamChunk> {
      step++;
      if (step < resumeSteps) {
        const call = {
          type: 'tool-call' as const,
          id: `c${step}`,
          name: 'tick',
          arguments: JSON.stringify({ step }),
        };
        yield { type: 'block-start', index: 0, blockType: 'tool-call' };
        yield { type: 'block-end', index: 0, block: call };
        yield { type: 'finish', reason: { kind: 'tool-calls' } };
      } else {
        yield { type: 'block-start', index: 0, blockType: 'text' };
        yield { type: 'text-delta', index: 0, text: 'THE END of a long session' };
        yield { type: 'block-end', index: 0, block: { type: 'text', text: 'THE END of a long session' } };
        yield { type: 'finish', reason: { kind: 'stop' } };
      }
    },
  };
  const tick = defineTool<{ step: number }>({
    name: 'tick',
    description: 'Counts a step.',
    effect: 'read',
    parameters: { type: 'object', properties: { step: { type: 'number' } }, required: ['step'] },
    execute: (args) => `tick ${args.step}`,
  });
  const harness = await createReinHarness({
    cwd: root,
    home,
    env,
    model: 'stepper/m',
    approve: 'yolo',
    providers: [stepper],
    tools: [tick as never],
  });
  const agent = await harness.createAgent({ cwd: root });
  agent.followup('take many steps');
  await agent.whenIdle();
  const id = agent.id;
  await harness.dispose();
  return id;
}

async function sdkResume(id: string): Promise<number> {
  const harness = await createReinHarness({
    cwd: root,
    home,
    env,
    model: 'burst/m',
    providers: [new BurstModel(0)],
  });
  const reading = performance.now();
  const stored = await harness.store.read(id);
  console.log(
    `(store.read of ${stored.events.length} events: ${formatNumber(performance.now() - reading)} ms)`,
  );
  const started = performance.now();
  const agent = await harness.resumeAgent(id);
  const seconds = (performance.now() - started) / 1000;
  await agent.dispose();
  await harness.dispose();
  return seconds;
}

async function tuiResume(id: string): Promise<number> {
  const started = performance.now();
  const stop = new AbortController();
  let seconds = Number.NaN;
  const terminal = new CountingTerminal();
  terminal.onWrite = (data) => {
    if (!Number.isNaN(seconds) || !data.includes('THE END of a long session')) return;
    seconds = (performance.now() - started) / 1000;
    stop.abort();
  };
  await runChat({
    cwd: root,
    env,
    home,
    model: 'burst/m',
    providers: [new BurstModel(0)],
    resumeId: id,
    terminal,
    signal: stop.signal,
  });
  return seconds;
}

try {
  const recorded = await recordedStream();
  const baselineRate = foldRate(recorded.events);
  const streamed = await tuiAbsorption(recorded.events);
  const idle = await echoLatencies(false);
  const busy = await echoLatencies(true);
  const id = await longSession();
  // The TUI goes first, so the baseline is the one that runs warm.
  const tuiSeconds = await tuiResume(id);
  const sdkSeconds = await sdkResume(id);
  const rows = [
    [
      `deltas absorbed (${deltaCount})`,
      `${formatNumber(streamed.perSecond)}/s`,
      `${formatNumber(baselineRate)}/s fold alone`,
      `${formatNumber(streamed.perSecond / baselineRate)}×`,
      '≥ 100,000/s',
      streamed.perSecond >= 100_000 ? 'ok' : 'MISSED',
    ],
    [
      'redraws while streaming',
      `${formatNumber(streamed.framesPerSecond)}/s (${streamed.frames})`,
      '—',
      '—',
      '≤ 60/s',
      streamed.framesPerSecond <= 60 ? 'ok' : 'MISSED',
    ],
    [
      'keystroke → echo, median',
      `${formatNumber(median(busy))} ms streaming`,
      `${formatNumber(median(idle))} ms idle`,
      `${formatNumber(median(busy) / median(idle))}×`,
      '≤ 16 ms',
      median(busy) <= 16 ? 'ok' : 'MISSED',
    ],
    [
      `--resume of ${resumeSteps} steps, tail shown`,
      `${formatNumber(tuiSeconds * 1000)} ms`,
      `${formatNumber(sdkSeconds * 1000)} ms resumeAgent`,
      `${formatNumber(tuiSeconds / sdkSeconds)}×`,
      '≤ 500 ms',
      tuiSeconds <= 0.5 ? 'ok' : 'MISSED',
    ],
  ];
  console.log(
    `The loop itself streamed the ${deltaCount} deltas (durable log included) at ${formatNumber(recorded.loopRate)}/s.\n`,
  );
  console.log(markdownTable(['measure', 'TUI', 'baseline (same run)', 'ratio', 'target', ''], rows));
  if (rows.some((row) => row[5] !== 'ok')) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
