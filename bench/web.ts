// `npm run bench:web`: the Web UI with a long session, in Debian's Chromium.
//
//   npm run bench:web                                   # this checkout's build
//   npm run bench:web -- --baseline=/path/to/other/rein # also an older checkout (its dist built), same run
//   npm run bench:web -- --steps=5000 --deltas=100000 --runs=1
//   npm run bench:web -- --profile=/tmp/web --trace=/tmp/web  # + CPU profiles, long frames, a Chrome trace
//   npm run bench:web -- --server-profile=/tmp/web-server   # + each `rein web` process's CPU profile
//   npm run bench:web -- --stream=0 --runs=9                # the opens only, more runs
//
// One session of `--steps` tool steps (100 turns, each of steps/100 `read_file` steps and a markdown
// answer) is run through the real loop into the disk store of a fresh Rein home, beside a short session
// of 1 turn of 10 steps. For each build, a fresh copy of that home is served by its own `rein web`
// process and opened in a fresh browser context:
//  1. open: navigation start to the frame after the last turn's end marker is in the page (the page's
//     own clock, `performance.now()` in requestAnimationFrame), and whether it was on screen then, for
//     the long and the short session;
//  2. stream: a message sent from the composer is answered by a loopback Chat Completions server that
//     streams `--deltas` text deltas; from the send to the frame after the answer's turn end is painted,
//     the page's performance timeline reports long animation frames and long tasks (PerformanceObserver),
//     and a requestAnimationFrame loop records every frame interval;
//     The page's main-thread CPU time for the same span (CDP `Performance` metrics in thread ticks:
//     script, layout, style) is the load-independent figure: the frame intervals are wall-clock and
//     grow when other processes take the machine's two cores. The `rein web` process's CPU time over
//     the span (the loop, the log, the event stream) is reported beside it.
//  3. memory: CDP `Performance.getMetrics` (JSHeapUsedSize, DOM nodes) after a CDP-forced GC, once opened
//     and once the stream has ended.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { generateSession, startStreamingModel, streamedDeltas, writeBenchConfig } from './web-session.ts';

const options = new Map(
  process.argv.slice(2).map((argument) => {
    const [name, ...value] = argument.replace(/^--/, '').split('=');
    return [name!, value.join('=')] as const;
  }),
);
const steps = Number(options.get('steps') ?? '5000');
const deltaCount = Number(options.get('deltas') ?? '100000');
const runs = Number(options.get('runs') ?? '1');
const repository = resolve(import.meta.dirname, '..');
const builds: { name: string; bin: string }[] = [
  { name: 'this build', bin: join(repository, 'bin', 'rein.js') },
];
const baseline = options.get('baseline');
if (baseline !== undefined && baseline !== '')
  builds.unshift({ name: 'baseline', bin: join(resolve(baseline), 'bin', 'rein.js') });
const chromiumPath = '/usr/bin/chromium';
// Writes the page's CPU profiles (open, stream) as `<prefix>-open-<session>.cpuprofile` and
// `<prefix>-stream-<build>-<run>.cpuprofile`, for DevTools.
const profilePrefix = options.get('profile');
// Runs each `rein web` under `node --cpu-prof` and writes its profile into this directory when it exits.
const serverProfileDirectory = options.get('server-profile');
// Writes a Chrome trace of each stream (devtools timeline categories) as `<prefix>-stream-<build>-<run>.json`.
const tracePrefix = options.get('trace');
const streamTimeoutSeconds = Number(options.get('stream-timeout') ?? '300');
// `--stream=0` measures the opens only (more runs in the same time; the stream rows are left out).
const measureStream = options.get('stream') !== '0';
const turns = 100;

/** What the page measured. */
interface OpenFigures {
  /** Navigation start to the frame after the last turn was painted, ms. */
  lastTurnMs: number;
  /** 1 when the last turn was on screen then (the page opened at the bottom). */
  onScreen: number;
  heapMiB: number;
  nodes: number;
}

interface StreamFigures {
  /** 1 when the page still showed the bottom once the answer ended (auto-scroll followed it). */
  followedBottom: number;
  /** Send to the frame after the answer's turn end was painted, ms. */
  totalMs: number;
  longestFrameMs: number;
  frameP99Ms: number;
  framesOver50: number;
  frames: number;
  longestAnimationFrameMs: number;
  /** Long animation frames (≥ 50 ms), and those in which the page's own script and rendering took under half the frame. */
  longAnimationFrames: number;
  longFramesMostlyWaiting: number;
  /** The most page work (script before rendering + the rendering phase, wall clock) in one long animation frame, ms. */
  longestFrameWorkMs: number;
  longTasks: number;
  longestTaskMs: number;
  /** The page's main-thread CPU time from the send to the painted end, and its parts, ms. */
  cpuMs: number;
  scriptMs: number;
  layoutMs: number;
  styleMs: number;
  layouts: number;
  /** CPU time of the `rein web` process (loop, log, event stream) over the same span, ms. */
  serverCpuMs: number;
  heapMiB: number;
  nodes: number;
}

// Installed before any page script: the performance timeline observers and a frame recorder.
const pageProbe = `
  window.__bench = { frames: [], longTasks: [], animationFrames: [], recording: false };
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__bench.longTasks.push([entry.startTime, entry.duration]);
    }).observe({ type: 'longtask', buffered: true });
  } catch {}
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        // The page's own work in the frame, by the wall clock: the rendering phase (frame callbacks,
        // style, layout, paint) and the scripts of the tasks before it (each of 5 ms or more).
        const end = entry.startTime + entry.duration;
        const before = entry.scripts.filter((script) => entry.renderStart === 0 || script.startTime < entry.renderStart);
        const work = (entry.renderStart > 0 ? end - entry.renderStart : 0) + before.reduce((sum, script) => sum + script.duration, 0);
        window.__bench.animationFrames.push([entry.startTime, entry.duration, work]);
        if (entry.duration > 100 && window.__bench.recording) console.log('LOAF ' + JSON.stringify({ duration: Math.round(entry.duration), blocking: Math.round(entry.blockingDuration), render: Math.round(entry.startTime + entry.duration - entry.renderStart), layout: Math.round(entry.startTime + entry.duration - entry.styleAndLayoutStart), scripts: entry.scripts.map((script) => [script.invoker, script.sourceFunctionName, Math.round(script.duration), Math.round(script.forcedStyleAndLayoutDuration)]) }));
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  } catch {}
  let last = 0;
  const frame = (now) => {
    if (window.__bench.recording && last !== 0) window.__bench.frames.push(now - last);
    last = now;
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  // Resolves with the time of the frame after the first one in which the last turn end shows \`text\` on
  // screen and no answer is still inserting its blocks.
  window.__benchPainted = (text, onScreen) => new Promise((done) => {
    const check = () => {
      const ends = document.querySelectorAll('[data-testid="turn-end"]');
      const end = ends[ends.length - 1];
      const box = end?.getBoundingClientRect();
      // An answer still inserting blocks it received (aria-busy) is not painted yet.
      const busy = document.querySelector('[data-testid="assistant-message"] [aria-busy="true"]') !== null;
      if (end !== undefined && !busy && end.textContent.includes(text) && (!onScreen || box.bottom > 0 && box.top < innerHeight))
        requestAnimationFrame((painted) => done(painted));
      else requestAnimationFrame(check);
    };
    check();
  });
`;

async function startWeb(
  bin: string,
  home: string,
  workspace: string,
): Promise<{ url: string; child: ChildProcess }> {
  const env: NodeJS.ProcessEnv = { ...process.env, REIN_HOME: home };
  for (const name of ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'REIN_MODEL', 'REIN_STORE'])
    delete env[name];
  const profiling =
    serverProfileDirectory !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${serverProfileDirectory}`] : [];
  const child = spawn(process.execPath, [...profiling, bin, 'web', '--port', '0'], {
    cwd: workspace,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const url = await new Promise<string>((done, fail) => {
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      const match = /running at (\S+)/.exec(stdout);
      if (match !== null) done(match[1]!);
    });
    child.on('exit', (code) => fail(new Error(`rein web exited ${code}: ${stderr.slice(-800)}`)));
  });
  return { url, child };
}

/** Starts the page's CPU profiler; the returned function stops it and writes the profile. */
async function startProfile(page: Page): Promise<(path: string) => Promise<void>> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  return async (path) => {
    const { profile } = await cdp.send('Profiler.stop');
    writeFileSync(path, JSON.stringify(profile));
    await cdp.detach();
  };
}

/** Starts counting the page's main-thread CPU (thread ticks); the returned function reads what was spent since. */
async function startCpu(page: Page): Promise<() => Promise<Record<string, number>>> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' } as never);
  const read = async (): Promise<Map<string, number>> =>
    new Map((await cdp.send('Performance.getMetrics')).metrics.map((entry) => [entry.name, entry.value]));
  const before = await read();
  return async () => {
    const after = await read();
    await cdp.detach();
    const spent = (name: string): number => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    return {
      cpuMs: spent('ThreadTime') * 1000,
      scriptMs: spent('ScriptDuration') * 1000,
      layoutMs: spent('LayoutDuration') * 1000,
      styleMs: spent('RecalcStyleDuration') * 1000,
      layouts: spent('LayoutCount'),
    };
  };
}

async function metrics(page: Page): Promise<{ heapMiB: number; nodes: number }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('Performance.enable');
  const { metrics: values } = await cdp.send('Performance.getMetrics');
  const value = (name: string): number => values.find((entry) => entry.name === name)?.value ?? 0;
  await cdp.detach();
  return { heapMiB: value('JSHeapUsedSize') / 2 ** 20, nodes: value('Nodes') };
}

async function openSession(
  browser: Browser,
  url: string,
  id: string,
  lastTurn: number,
): Promise<{ page: Page; figures: OpenFigures }> {
  const context = await browser.newContext({ viewport: { width: 1180, height: 760 } });
  const page = await context.newPage();
  page.setDefaultTimeout(300_000);
  await page.addInitScript(pageProbe);
  page.on('console', (message) => {
    if (profilePrefix !== undefined && message.text().startsWith('LOAF'))
      process.stderr.write(`${message.text()}\n`);
  });
  page.on('crash', () => process.stderr.write('page crashed\n'));
  page.on('pageerror', (error) => process.stderr.write(`page error: ${error.message}\n`));
  const profiler = profilePrefix !== undefined ? await startProfile(page) : undefined;
  await page.goto(`${url}#/s/${encodeURIComponent(id)}`);
  const lastTurnMs = await page.evaluate(
    (text) =>
      (
        window as unknown as { __benchPainted(text: string, onScreen: boolean): Promise<number> }
      ).__benchPainted(text, false),
    `Turn ${lastTurn} completed`,
  );
  // Whether the page showed it: opening at the last turn means it is on screen, not just built.
  const onScreen = await page.evaluate(`(() => {
    const ends = document.querySelectorAll('[data-testid="turn-end"]');
    const box = ends[ends.length - 1].getBoundingClientRect();
    return box.bottom > 0 && box.top < innerHeight;
  })()`);
  await profiler?.(`${profilePrefix}-open-${id}.cpuprofile`);
  if (profilePrefix !== undefined)
    process.stderr.write(
      `${id} requests: ${await page.evaluate(`JSON.stringify(performance.getEntriesByType('resource').map((entry) => [entry.name.replace(/\\?.*/, '').slice(-40), Math.round(entry.startTime), Math.round(entry.responseStart), Math.round(entry.responseEnd)]))`)} painted at ${Math.round(lastTurnMs)}\n`,
    );

  return { page, figures: { lastTurnMs, onScreen: onScreen === true ? 1 : 0, ...(await metrics(page)) } };
}

/**
 * The renderer main thread's tasks in a Chrome trace, by wall time and by thread CPU time: a task that
 * is long on the wall clock but short in CPU waited for a core (the machine's load), not for the page.
 */
function describeTasks(trace: Buffer): string {
  const events = (JSON.parse(trace.toString('utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
  const main = events.find((event) => event.name === 'thread_name' && event.args?.name === 'CrRendererMain');
  const tasks = events.filter(
    (event) =>
      event.name === 'RunTask' &&
      event.ph === 'X' &&
      event.pid === main?.pid &&
      event.tid === main?.tid &&
      event.dur !== undefined,
  );
  const wall = tasks.map((task) => task.dur! / 1000);
  const cpu = tasks.map((task) => (task.tdur ?? 0) / 1000);
  const over = (values: number[]): number => values.filter((value) => value > 50).length;
  // Frames: from one BeginMainFrame to the next, and the main thread's CPU in the tasks started between.
  const frameStarts = events
    .filter(
      (event) =>
        event.name === 'WebFrameWidgetImpl::BeginMainFrame' &&
        event.pid === main?.pid &&
        event.tid === main?.tid,
    )
    .map((event) => event.ts)
    .sort((a, b) => a - b);
  const starts = tasks.map((task) => task.ts).sort((a, b) => a - b);
  const cpuAt = new Map(tasks.map((task) => [task.ts, (task.tdur ?? 0) / 1000]));
  const longFrames: { wall: number; cpu: number }[] = [];
  // The main thread's CPU in every frame: how much a frame asks of the core, whatever the load.
  const frameCpu: number[] = [];
  let next = 0;
  for (let index = 1; index < frameStarts.length; index++) {
    const from = frameStarts[index - 1]!;
    const to = frameStarts[index]!;
    let spent = 0;
    while (next < starts.length && starts[next]! < from) next++;
    for (let at = next; at < starts.length && starts[at]! < to; at++) spent += cpuAt.get(starts[at]!) ?? 0;
    frameCpu.push(spent);
    if ((to - from) / 1000 > 50) longFrames.push({ wall: (to - from) / 1000, cpu: spent });
  }
  frameCpu.sort((a, b) => a - b);
  const quantile = (share: number): string =>
    (frameCpu[Math.min(frameCpu.length - 1, Math.floor(share * frameCpu.length))] ?? 0).toFixed(1);
  const busy = longFrames.filter((frame) => frame.cpu > 25);
  return (
    `main-thread tasks: ${tasks.length}; over 50 ms: ${over(wall)} by the wall clock, ${over(cpu)} in CPU time; ` +
    `longest ${Math.max(0, ...wall).toFixed(0)} ms wall, longest in CPU ${Math.max(0, ...cpu).toFixed(0)} ms; ` +
    `frames over 50 ms (BeginMainFrame to BeginMainFrame): ${longFrames.length}, of which the main thread ran ` +
    `over 25 ms of CPU in ${busy.length}; most CPU in one frame ${Math.max(0, ...longFrames.map((frame) => frame.cpu)).toFixed(0)} ms ` +
    `(wall ${longFrames.map((frame) => `${frame.wall.toFixed(0)}/${frame.cpu.toFixed(0)}`).join(' ')} ms wall/CPU); ` +
    `main-thread CPU per frame: p50 ${quantile(0.5)}, p90 ${quantile(0.9)}, p99 ${quantile(0.99)}, max ${quantile(1)} ms, ` +
    `over 25 ms in ${frameCpu.filter((spent) => spent > 25).length} of ${frameCpu.length} frames`
  );
}

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string };
}

/** CPU time (user + system) a process has used so far, ms (Linux `/proc/<pid>/stat`, 100 ticks a second). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function stream(
  page: Page,
  lastTurn: number,
  serverPid: number,
  label: string,
): Promise<StreamFigures> {
  await page.waitForTimeout(500);
  const started = await page.evaluate(() => {
    const bench = (
      window as unknown as {
        __bench: { recording: boolean; frames: number[]; longTasks: unknown[]; animationFrames: unknown[] };
      }
    ).__bench;
    bench.frames.length = 0;
    bench.recording = true;
    return performance.now();
  });
  const profiler = profilePrefix !== undefined ? await startProfile(page) : undefined;
  const cpu = await startCpu(page);
  const serverCpuBefore = processCpuMs(serverPid);
  if (tracePrefix !== undefined)
    await page
      .context()
      .browser()!
      .startTracing(page, {
        categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'blink'],
      });
  const input = page.getByTestId('composer-input');
  await input.fill('Write the long report now.');
  await input.press('Enter');
  // A build that cannot keep up is stopped after `--stream-timeout` seconds and reported as such.
  let timer: NodeJS.Timeout | undefined;
  const paintedAt = await Promise.race([
    page.evaluate(
      (text) =>
        (
          window as unknown as { __benchPainted(text: string, onScreen: boolean): Promise<number> }
        ).__benchPainted(text, false),
      `Turn ${lastTurn + 1} completed`,
    ),
    new Promise<number>((done) => {
      timer = setTimeout(() => done(Number.NaN), streamTimeoutSeconds * 1000);
    }),
  ]);
  clearTimeout(timer);
  const spent = await cpu();
  const serverCpuMs = processCpuMs(serverPid) - serverCpuBefore;
  if (tracePrefix !== undefined) {
    const trace = await page.context().browser()!.stopTracing();
    writeFileSync(`${tracePrefix}-stream-${label}.json`, trace);
    process.stderr.write(`${describeTasks(trace)}\n`);
  }
  await profiler?.(`${profilePrefix}-stream-${label}.cpuprofile`);
  // A string, so the bundler's helpers (tsx names inner functions) never reach the page.
  const timeline = (await page.evaluate(`(() => {
    const bench = window.__bench;
    bench.recording = false;
    const within = (entries) => entries.filter(([start]) => start >= ${started}).map(([, duration]) => duration);
    const longFrames = bench.animationFrames.filter(([start, duration]) => start >= ${started} && duration >= 50);
    const scroller = document.querySelector('[data-testid="scroller"]');
    const atBottom = scroller !== null && scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
    return { atBottom, frames: bench.frames.slice(), longTasks: within(bench.longTasks), animationFrames: within(bench.animationFrames), longFrameWork: longFrames.map(([, duration, work]) => [duration, work]) };
  })()`)) as {
    atBottom: boolean;
    frames: number[];
    longTasks: number[];
    animationFrames: number[];
    longFrameWork: [number, number][];
  };
  const sorted = [...timeline.frames].sort((a, b) => a - b);
  return {
    followedBottom: timeline.atBottom ? 1 : 0,
    totalMs: paintedAt - started,
    longestFrameMs: sorted[sorted.length - 1] ?? 0,
    frameP99Ms: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
    framesOver50: sorted.filter((duration) => duration > 50).length,
    frames: sorted.length,
    longestAnimationFrameMs: Math.max(0, ...timeline.animationFrames),
    longAnimationFrames: timeline.longFrameWork.length,
    longFramesMostlyWaiting: timeline.longFrameWork.filter(([duration, work]) => work < duration / 2).length,
    longestFrameWorkMs: Math.max(0, ...timeline.longFrameWork.map(([, work]) => work)),
    longTasks: timeline.longTasks.length,
    longestTaskMs: Math.max(0, ...timeline.longTasks),
    cpuMs: spent.cpuMs!,
    scriptMs: spent.scriptMs!,
    layoutMs: spent.layoutMs!,
    styleMs: spent.styleMs!,
    layouts: spent.layouts!,
    serverCpuMs,
    ...(await metrics(page)),
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'rein-bench-web-'));
  const deltas = streamedDeltas(deltaCount);
  const model = await startStreamingModel(deltas, 200);
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  const children: ChildProcess[] = [];
  try {
    const seed = join(root, 'seed-home');
    writeBenchConfig(seed, model.url);
    const generatedAt = performance.now();
    const long = await generateSession(seed, 'long-session', turns, Math.max(1, Math.round(steps / turns)));
    const short = await generateSession(seed, 'short-session', 1, 10);
    process.stderr.write(
      `generated ${long.events} events (${long.steps} tool steps, ${long.turns} turns) and a short session of ${short.events} events in ${Math.round(performance.now() - generatedAt)} ms\n`,
    );
    const results = new Map<string, { long: OpenFigures[]; short: OpenFigures[]; stream: StreamFigures[] }>();
    for (let run = 0; run < runs; run++) {
      for (const build of builds) {
        const home = join(root, `home-${run}-${builds.indexOf(build)}`);
        cpSync(seed, home, { recursive: true });
        const { url, child } = await startWeb(build.bin, home, repository);
        process.stderr.write(`${build.name}: rein web at ${url}\n`);
        children.push(child);
        const entry = results.get(build.name) ?? { long: [], short: [], stream: [] };
        results.set(build.name, entry);
        const shortOpen = await openSession(browser, url, short.id, 1);
        entry.short.push(shortOpen.figures);
        await shortOpen.page.context().close();
        const longOpen = await openSession(browser, url, long.id, long.turns);
        entry.long.push(longOpen.figures);
        process.stderr.write(
          `${build.name}: opened the long session in ${Math.round(longOpen.figures.lastTurnMs)} ms\n`,
        );
        if (measureStream) {
          const label = `${build.name.replaceAll(' ', '-')}-${run + 1}`;
          const figures = await stream(longOpen.page, long.turns, child.pid!, label);
          entry.stream.push(figures);
          // Per run, so builds can be compared pair by pair at the load each pair ran under.
          process.stderr.write(
            `${build.name} run ${run + 1}: load ${loadavg()[0]!.toFixed(2)}; stream ${Math.round(figures.totalMs)} ms, ` +
              `frames over 50 ms ${figures.framesOver50}/${figures.frames}, longest frame ${Math.round(figures.longestFrameMs)} ms, ` +
              `long animation frames ${figures.longAnimationFrames} (page worked under half: ${figures.longFramesMostlyWaiting}, ` +
              `most work ${Math.round(figures.longestFrameWorkMs)} ms), longest task ${Math.round(figures.longestTaskMs)} ms, ` +
              `page CPU ${Math.round(figures.cpuMs)} ms, server CPU ${figures.serverCpuMs} ms\n`,
          );
        }
        await longOpen.page.context().close();
        child.kill('SIGTERM');
        await new Promise((done) => child.once('exit', done));
        rmSync(home, { recursive: true, force: true });
      }
    }
    const rows: [
      string,
      (figures: { long: OpenFigures[]; short: OpenFigures[]; stream: StreamFigures[] }) => number,
      number,
    ][] = [
      [
        `open ${short.events}-event session: last turn painted, ms`,
        (f) => median(f.short.map((x) => x.lastTurnMs)),
        0,
      ],
      [
        `open ${long.events}-event session: last turn painted, ms`,
        (f) => median(f.long.map((x) => x.lastTurnMs)),
        0,
      ],
      ['  last turn on screen once painted (1 = yes)', (f) => median(f.long.map((x) => x.onScreen)), 0],
      ['  page heap after open (after GC), MiB', (f) => median(f.long.map((x) => x.heapMiB)), 1],
      ['  DOM nodes after open', (f) => median(f.long.map((x) => x.nodes)), 0],
      [
        `stream ${deltaCount} deltas: send to answer painted, ms`,
        (f) => median(f.stream.map((x) => x.totalMs)),
        0,
      ],
      [
        '  still at the bottom when the answer ended (1 = yes)',
        (f) => median(f.stream.map((x) => x.followedBottom)),
        0,
      ],
      ['  longest frame interval, ms', (f) => median(f.stream.map((x) => x.longestFrameMs)), 0],
      ['  p99 frame interval, ms', (f) => median(f.stream.map((x) => x.frameP99Ms)), 1],
      ['  frames over 50 ms / frames', (f) => median(f.stream.map((x) => x.framesOver50)), 0],
      [
        '  longest long-animation-frame, ms',
        (f) => median(f.stream.map((x) => x.longestAnimationFrameMs)),
        0,
      ],
      ['  long animation frames (≥ 50 ms)', (f) => median(f.stream.map((x) => x.longAnimationFrames)), 0],
      [
        '    of which the page worked under half the frame',
        (f) => median(f.stream.map((x) => x.longFramesMostlyWaiting)),
        0,
      ],
      [
        '    most page work in one long frame, ms',
        (f) => median(f.stream.map((x) => x.longestFrameWorkMs)),
        0,
      ],
      ['  long tasks (≥ 50 ms)', (f) => median(f.stream.map((x) => x.longTasks)), 0],
      ['  longest task, ms', (f) => median(f.stream.map((x) => x.longestTaskMs)), 0],
      ['  page main-thread CPU, send to answer painted, ms', (f) => median(f.stream.map((x) => x.cpuMs)), 0],
      ['    of which script, ms', (f) => median(f.stream.map((x) => x.scriptMs)), 0],
      ['    of which layout, ms', (f) => median(f.stream.map((x) => x.layoutMs)), 0],
      ['    of which style, ms', (f) => median(f.stream.map((x) => x.styleMs)), 0],
      ['  layouts', (f) => median(f.stream.map((x) => x.layouts)), 0],
      ['  rein web process CPU, same span, ms', (f) => median(f.stream.map((x) => x.serverCpuMs)), 0],
      ['  page heap after stream (after GC), MiB', (f) => median(f.stream.map((x) => x.heapMiB)), 1],
      ['  DOM nodes after stream', (f) => median(f.stream.map((x) => x.nodes)), 0],
    ];
    const names = [...results.keys()];
    const lines = [`| metric | ${names.join(' | ')} |`, `| --- | ${names.map(() => '---:').join(' | ')} |`];
    for (const [label, pick, digits] of measureStream ? rows : rows.slice(0, 5)) {
      const cells = names.map((name) => {
        const figures = results.get(name)!;
        const value = pick(figures);
        const frames = label.includes('frames over')
          ? ` / ${median(figures.stream.map((x) => x.frames))}`
          : '';
        if (Number.isNaN(value)) return `not painted in ${streamTimeoutSeconds} s`;
        return `${value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })}${frames}`;
      });
      lines.push(`| ${label} | ${cells.join(' | ')} |`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await browser.close();
    await model.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
