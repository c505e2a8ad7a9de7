import type {
  Agent,
  AnySessionEvent,
  ContentBlock,
  ImageBlock,
  ModelPricing,
  ReinHarness,
  TurnEndReason,
} from '../index.ts';
import {
  HarnessError,
  acceptsImages,
  checkImagesFit,
  createReinHarness,
  formatCost,
  openSessionStore,
  pricingLookup,
  sessionCost,
  parseModelRoute,
  reinSessionsDirectory,
  raiseBudget,
  continueAfterBudget,
  reject,
  resolveReinHome,
  setGoal,
} from '../internal.ts';
import { readImageFiles } from './image-files.ts';
import { resolveSessionId } from './session-id.ts';
import { formatCount } from './count-text.ts';
import { CliError, exitCodes, usageError } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import { readAll } from './cli-io.ts';
import { approvalModeOption, checkModel, resolveWorkspace } from './command-options.ts';
import type { ParsedCommand } from './command-line.ts';
import { positiveIntegerOption, stringOption } from './command-line.ts';
import { runSpec } from './command-specs.ts';
import type { RunOutput } from './run-output.ts';
import { JsonRunOutput, TextRunOutput } from './run-output.ts';
import { describeTurnEnd } from './transcript-lines.ts';
import type { ReachedBudget } from './run-budgets.ts';
import { askToRaise, budgetOptions, budgetPauseMessage, doubledLimit } from './run-budgets.ts';
import { TerminalApprover } from './terminal-approver.ts';

/** How long a second Ctrl-C waits for the log to reach the disk before exiting anyway. */
const flushTimeoutMs = 3_000;

/** `rein run`: one prompt, headless, streamed; resolves the exit code. */
export async function runCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const { values } = parsed;
  const maxTurns = positiveIntegerOption(runSpec, values, 'max-turns');
  const maxSteps = positiveIntegerOption(runSpec, values, 'max-steps');
  const approve = approvalModeOption('run', values.approve);
  const resumeOption = stringOption(values, 'resume');
  const continueLatest = values.continue === true;
  if (resumeOption !== undefined && continueLatest)
    throw usageError('run', "use either '--resume <id>' or '--continue', not both");
  const model = stringOption(values, 'model');
  if (model !== undefined) checkModel('run', model);
  const reasoningEffort = reasoningEffortOption(values);
  const budgets = budgetOptions(values);
  const goalOption = stringOption(values, 'goal');
  if (goalOption !== undefined && goalOption.trim() === '') {
    throw usageError('run', '\'--goal\' needs an objective: rein run --goal "what to achieve"');
  }
  const { cwd, resumeId } = await workspaceFor(io, stringOption(values, 'cwd'), resumeOption);
  const images = await readImageFiles(parsed.repeated?.image ?? [], cwd);
  const { prompt, goal } = goalOf(
    goalOption,
    await resolvePrompt(parsed, io, goalOption !== undefined || images.length > 0),
  );
  const output: RunOutput = values.json === true ? new JsonRunOutput(io) : new TextRunOutput(io);
  const interrupt = new InterruptState();
  const onSigint = (): void => interrupt.press();
  process.on('SIGINT', onSigint);
  let harness: ReinHarness | undefined;
  try {
    harness = await createReinHarness({
      cwd,
      env: io.env,
      ...(model !== undefined ? { model } : {}),
      ...(approve !== undefined ? { approve } : {}),
      ...(budgets !== undefined ? { budgets } : {}),
      mcp: { onWarning: (warning) => output.notice(warning.message) },
    });
    if (interrupt.pressed) return exitCodes.aborted;
    for (const warning of harness.warnings) output.warning(warning);
    const resuming = resumeId !== undefined || continueLatest;
    // A new session is measured before it exists, so a refused prompt leaves nothing behind.
    if (prompt !== undefined && !resuming) {
      harness.assertPromptFits(prompt, model !== undefined ? parseModelRoute(model) : harness.route);
    }
    if (images.length > 0 && !resuming) {
      assertTakesImages(harness, model !== undefined ? parseModelRoute(model) : harness.route, images);
    }
    const agent = await openAgent(harness, { cwd, resumeId, continueLatest, model, reasoningEffort });
    if ((prompt !== undefined || images.length > 0) && resuming) {
      const route = routeOf(agent);
      const resumed = route !== undefined ? parseModelRoute(route) : harness.route;
      if (prompt !== undefined) harness.assertPromptFits(prompt, resumed);
      if (images.length > 0) assertTakesImages(harness, resumed, images);
    }
    // The demo notice is for a fresh run that fell back to it; other notices (an undescribed model) always show.
    const fellBack = model === undefined && resumeId === undefined && !continueLatest;
    for (const notice of !harness.usingDemo || fellBack ? harness.notices : harness.mcpNotices)
      output.notice(notice);
    const message = promptMessage(prompt, images);
    return await drive(harness, agent, { io, output, interrupt, message, goal, maxTurns, maxSteps });
  } finally {
    process.off('SIGINT', onSigint);
    output.close();
    await harness?.dispose();
  }
}

interface DriveOptions {
  io: CliIo;
  output: RunOutput;
  interrupt: InterruptState;
  /** The prompt queued after the goal (its text and attached images), if any. */
  message: string | ContentBlock[] | undefined;
  goal: string | undefined;
  maxTurns: number | undefined;
  maxSteps: number | undefined;
}

async function drive(harness: ReinHarness, agent: Agent, options: DriveOptions): Promise<number> {
  const { io, output, interrupt } = options;
  const turnEnds: TurnEndReason[] = [];
  let turnsStarted = 0;
  let stoppedBy: string | undefined;
  // The budget that paused the latest turn; cleared when a turn starts.
  let reachedBudget: ReachedBudget | undefined;
  // The run's own events start here: a resumed session's earlier turns are not this run's cost.
  const firstRunSeq = agent.session.log.length;
  const observe = (event: AnySessionEvent): void => {
    if (event.type === 'turn/start') {
      turnsStarted++;
      reachedBudget = undefined;
    }
    if (event.type === 'budget/reached') reachedBudget = event.data as ReachedBudget;
    if (event.type === 'turn/end') turnEnds.push((event.data as { reason: TurnEndReason }).reason);
    output.event(event);
  };
  output.live('session', {
    id: agent.id,
    cwd: agent.options.cwd ?? agent.session.header.cwd ?? null,
    model: routeOf(agent) ?? null,
    resumed: agent.session.firstLiveSeq > 0,
  });
  // Events the session wrote before we subscribed (a resumed log's end-seed marker) come first.
  for (const event of agent.session.log.slice(agent.session.firstLiveSeq)) observe(event);
  harness.hooks.on('session/event', ({ event }) => observe(event), { scope: agent.id });
  harness.hooks.on('agent/status', ({ status }) => output.live('agent/status', { status }), {
    scope: agent.id,
  });
  harness.hooks.on(
    'agent/pre-step',
    (payload, next) => {
      if (options.maxSteps !== undefined && payload.step > options.maxSteps) {
        stoppedBy = `the turn reached --max-steps ${options.maxSteps}`;
        return reject();
      }
      if (options.maxTurns !== undefined && payload.step === 1 && turnsStarted > options.maxTurns) {
        stoppedBy = `the run reached --max-turns ${options.maxTurns}`;
        return reject();
      }
      return next();
    },
    { scope: agent.id },
  );
  const interactive = io.stdin.isTTY === true && io.stderr.isTTY === true;
  // Aborts a budget question when Ctrl-C is pressed while it waits for an answer.
  const asking = new AbortController();
  const detachApprover = interactive
    ? harness.approvals.attach(
        new TerminalApprover({
          io,
          mainSession: agent.id,
          beforePrompt: () => output.close(),
        }),
      )
    : undefined;
  interrupt.bind({
    first: () => {
      output.notice('Cancelling… (press Ctrl-C again to quit at once)');
      asking.abort();
      agent.cancel({ kind: 'user' });
    },
    second: async () => {
      output.close();
      await flushQuickly(agent);
      process.exit(exitCodes.aborted);
    },
  });
  try {
    // Ctrl-C while the session was being opened: stop before any turn starts.
    if (interrupt.pressed) return exitCodes.aborted;
    // With a prompt, the prompt is the work and the goal only keeps it going; alone, the goal is the prompt.
    if (options.goal !== undefined) setGoal(agent, options.goal, { start: options.message === undefined });
    if (options.message !== undefined) agent.followup(options.message);
    await agent.whenIdle();
    // A budget pauses the turn (`blocked`); on a terminal the user may raise it and go on, as often as it recurs.
    while (reachedBudget !== undefined && turnEnds.at(-1)?.kind === 'blocked' && !interrupt.pressed) {
      const reached: ReachedBudget = reachedBudget;
      output.close();
      if (!interactive || !(await askToRaise(io, reached, asking.signal))) break;
      raiseBudget(agent, doubledLimit(reached));
      continueAfterBudget(agent);
      await agent.whenIdle();
    }
  } finally {
    detachApprover?.();
  }
  output.live('exit', { sessionId: agent.id, reason: turnEnds.at(-1) ?? null });
  if (output instanceof TextRunOutput) {
    const line = usageLine(agent.session.log.slice(firstRunSeq), pricingLookup(harness.llm));
    if (line !== undefined) output.notice(line);
  }
  if (output instanceof TextRunOutput && io.stderr.isTTY === true) {
    output.notice(`session ${agent.id} · continue with: rein run --resume ${agent.id} "…"`);
  }
  if (interrupt.pressed) return exitCodes.aborted;
  const last = turnEnds.at(-1);
  if (last === undefined) return exitCodes.ok;
  switch (last.kind) {
    case 'completed':
      return exitCodes.ok;
    case 'max-tokens':
      io.stderr.write(`rein: ${describeTurnEnd(last)}\n`);
      return exitCodes.maxTokens;
    case 'aborted':
      return exitCodes.aborted;
    case 'error':
      io.stderr.write(`rein: ${describeTurnEnd(last)}\n`);
      return exitCodes.error;
    case 'blocked':
      if (reachedBudget !== undefined) {
        io.stderr.write(budgetPauseMessage(reachedBudget, agent.id));
        return exitCodes.budget;
      }
      io.stderr.write(`rein: error TURN_BLOCKED: ${stoppedBy ?? describeTurnEnd(last)}\n`);
      return exitCodes.error;
    case 'interrupted':
      io.stderr.write(`rein: error INTERRUPTED: ${describeTurnEnd(last)}\n`);
      return exitCodes.error;
  }
}

/** The `provider/model` an agent will use: its options, else the route its log last used. */
function routeOf(agent: Agent): string | undefined {
  if (agent.options.provider !== undefined && agent.options.model !== undefined) {
    return `${agent.options.provider}/${agent.options.model}`;
  }
  const log = agent.session.log;
  for (let index = log.length - 1; index >= 0; index--) {
    if (log.typeAt(index) !== 'request/context') continue;
    const event = log.at(index)!;
    {
      const data = event.data as { provider: string; model: string };
      return `${data.provider}/${data.model}`;
    }
  }
  return undefined;
}

/** Counts Ctrl-C presses and runs the bound reaction of the first and the second. */
class InterruptState {
  #presses = 0;
  #first: (() => void) | undefined;
  #second: (() => Promise<void>) | undefined;

  get pressed(): boolean {
    return this.#presses > 0;
  }

  bind(reactions: { first: () => void; second: () => Promise<void> }): void {
    this.#first = reactions.first;
    this.#second = reactions.second;
  }

  press(): void {
    this.#presses++;
    if (this.#presses === 1) {
      // Before the agent exists there is nothing to cancel; the run checks `pressed` and stops.
      this.#first?.();
    } else if (this.#presses === 2) {
      if (this.#second === undefined) process.exit(exitCodes.aborted);
      void this.#second();
    }
  }
}

async function flushQuickly(agent: Agent): Promise<void> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), flushTimeoutMs);
  try {
    await agent.session.checkpoint('flush', timeout.signal);
  } catch {
    // Exiting at once was asked for; a flush that fails or times out cannot be helped here.
  } finally {
    clearTimeout(timer);
  }
}

async function openAgent(
  harness: ReinHarness,
  options: {
    cwd: string;
    resumeId: string | undefined;
    continueLatest: boolean;
    model: string | undefined;
    reasoningEffort: string | undefined;
  },
): Promise<Agent> {
  const route = options.model !== undefined ? parseModelRoute(options.model) : undefined;
  const effort = options.reasoningEffort !== undefined ? { reasoningEffort: options.reasoningEffort } : {};
  const routeOptions = {
    ...(route !== undefined ? { provider: route.provider, model: route.model } : {}),
    ...effort,
  };
  if (options.resumeId !== undefined) return harness.resumeAgent(options.resumeId, routeOptions);
  if (options.continueLatest) {
    const id = await latestSessionIn(harness, options.cwd);
    if (id === undefined) {
      throw new CliError(
        'NO_SESSION',
        `no session to continue in ${options.cwd}; start one with 'rein run "…"'`,
      );
    }
    return harness.resumeAgent(id, routeOptions);
  }
  return harness.createAgent({ cwd: options.cwd, ...effort });
}

/**
 * `--reasoning-effort <level>` and `--thinking [budget]` as one effort: a level, or a token budget
 * (`--thinking` alone is `medium`); giving both is a usage error.
 */
function reasoningEffortOption(values: ParsedCommand['values']): string | undefined {
  const level = stringOption(values, 'reasoning-effort');
  const thinking = values.thinking;
  if (level !== undefined && thinking !== undefined) {
    throw usageError('run', "use either '--reasoning-effort <level>' or '--thinking [budget]', not both");
  }
  if (level !== undefined) {
    if (!/^[a-z]+$/.test(level)) {
      throw usageError(
        'run',
        `'--reasoning-effort' takes a level such as low, medium or high, not '${level}'`,
      );
    }
    return level;
  }
  if (thinking === undefined) return undefined;
  return thinking === true ? 'medium' : String(thinking);
}

/** The most recently updated top-level session whose workspace is `cwd`. */
export async function latestSessionIn(harness: ReinHarness, cwd: string): Promise<string | undefined> {
  const rows = (await harness.store.list())
    .filter((row) => row.cwd === cwd)
    .sort((a, b) => b.updatedAt - a.updatedAt);
  for (const row of rows) {
    if (row.parentSession === undefined) return row.id;
    const { header } = await harness.store.read(row.id);
    if (header.origin !== 'subagent') return row.id;
  }
  return undefined;
}

/**
 * The workspace of the run: `--cwd` (or the current directory); for `--resume`, the session's own
 * workspace, since the tools are confined to it — a different explicit `--cwd` is refused.
 */
export async function workspaceFor(
  io: CliIo,
  option: string | undefined,
  resumeOption: string | undefined,
): Promise<{ cwd: string; resumeId: string | undefined }> {
  if (resumeOption === undefined) return { cwd: await resolveWorkspace(io.cwd, option), resumeId: undefined };
  const store = await openSessionStore(io.env.REIN_STORE, {
    sessionsDirectory: reinSessionsDirectory(resolveReinHome(undefined, io.env)),
  });
  let header;
  let resumeId: string;
  try {
    resumeId = await resolveSessionId(store, resumeOption);
    ({ header } = await store.read(resumeId));
  } finally {
    await store.close?.();
  }
  if (header.cwd === undefined) return { cwd: await resolveWorkspace(io.cwd, option), resumeId };
  const own = await resolveWorkspace(io.cwd, header.cwd);
  if (option !== undefined && (await resolveWorkspace(io.cwd, option)) !== own) {
    throw usageError('run', `session ${resumeId} works in ${own}; leave out '--cwd' to resume it there`);
  }
  return { cwd: own, resumeId };
}

/** The prompt to queue: its text alone, or the text (when there is any) followed by the images. */
function promptMessage(
  prompt: string | undefined,
  images: readonly ImageBlock[],
): string | ContentBlock[] | undefined {
  if (images.length === 0) return prompt;
  const text = prompt !== undefined && prompt.trim() !== '' ? [{ type: 'text' as const, text: prompt }] : [];
  return [...text, ...images];
}

/** Refuses, before anything is sent or stored, images a route's model does not take (any, or this large). */
function assertTakesImages(
  harness: ReinHarness,
  route: { provider: string; model: string },
  images: readonly ImageBlock[],
): void {
  const info = harness.llm.prepare(route).model;
  if (!acceptsImages(info)) {
    throw new CliError(
      'IMAGES_UNSUPPORTED',
      `${route.provider}/${route.model} does not accept images; pick one that does with --model ` +
        '(e.g. an OpenAI or Anthropic model) or leave out --image',
    );
  }
  try {
    checkImagesFit(images, info, `${route.provider}/${route.model}`);
  } catch (error) {
    if (error instanceof HarnessError) throw new CliError(error.code, error.message);
    throw error;
  }
}

/** A prompt of the form `/goal objective`. */
const goalPrompt = /^\/goal(?:\s+|$)/;

/** Splits the run's input into the goal to set and the prompt to send after it. */
function goalOf(
  option: string | undefined,
  prompt: string,
): { goal: string | undefined; prompt: string | undefined } {
  const trimmed = prompt.trim();
  if (goalPrompt.test(trimmed)) {
    const objective = trimmed.replace(goalPrompt, '').trim();
    if (option !== undefined) throw usageError('run', "give the goal once: either '--goal' or '/goal …'");
    if (objective === '') throw usageError('run', 'missing objective: rein run "/goal what to achieve"');
    return { goal: objective, prompt: undefined };
  }
  if (option !== undefined) return { goal: option.trim(), prompt: trimmed === '' ? undefined : prompt };
  return { goal: undefined, prompt };
}

async function resolvePrompt(parsed: ParsedCommand, io: CliIo, optional: boolean): Promise<string> {
  const option = stringOption(parsed.values, 'prompt');
  const positional = parsed.positionals;
  if (option !== undefined && positional.length > 0) {
    throw usageError('run', 'give the prompt once: either \'-p "…"\' or as an argument');
  }
  let prompt: string;
  if (option !== undefined) prompt = option;
  else if (positional.length === 1 && positional[0] === '-') prompt = await readAll(io.stdin);
  else if (positional.length > 0) prompt = positional.join(' ');
  else if (io.stdin.isTTY !== true) prompt = await readAll(io.stdin);
  else prompt = '';
  if (prompt.trim() === '' && !optional) throw usageError('run', 'missing prompt: rein run "what to do"');
  return prompt;
}

/** One line of what the run used and cost: `tokens 1,234 in (800 cached) · 56 out · $0.0012`; undefined without usage. */
export function usageLine(
  events: Iterable<AnySessionEvent>,
  pricing: (provider: string, model: string) => ModelPricing | undefined,
): string | undefined {
  const { total } = sessionCost(events, pricing);
  const input = total.inputTokens + total.cacheReadTokens + total.cacheWriteTokens;
  if (input === 0 && total.outputTokens === 0) return undefined;
  const count = formatCount;
  const cached = total.cacheReadTokens > 0 ? ` (${count(total.cacheReadTokens)} cached)` : '';
  const cost =
    total.unpricedResponses > 0
      ? total.cost > 0
        ? `at least ${formatCost(total.cost)} (a model without known prices)`
        : 'cost unknown (no prices for this model)'
      : formatCost(total.cost);
  return `tokens ${count(input)} in${cached} · ${count(total.outputTokens)} out · ${cost}`;
}
