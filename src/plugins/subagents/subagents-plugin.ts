import type { Agent, AgentOptions, HarnessPlugin, PluginHost } from '../../agent/index.ts';
import type { Tool, ToolContext, ToolOutput } from '../../tools/index.ts';
import { ToolError, defineTool } from '../../tools/index.ts';
import { HarnessError } from '../../llm/index.ts';
import type { PricingLookup } from '../../session/index.ts';
import { pricingLookup } from '../budgets/usage-cost.ts';
import type { TaskResultMeta } from './child-outcome.ts';
import { readChildOutcome } from './child-outcome.ts';

/** Options of `subagentsPlugin`. */
export interface SubagentsPluginOptions {
  /** How deep subagents may nest (a top-level agent is depth 0); 2 by default. */
  maxDepth?: number;
  /** The tool's name; `task` by default. */
  toolName?: string;
  /** The provider children use; the parent's when omitted. */
  provider?: string;
  /** The model children use unless the call names one; the parent's when omitted. */
  model?: string;
  /** The tools children see unless the call narrows them; the parent's when omitted. */
  tools?: readonly string[];
  /** System-prompt text for children; a short subagent brief when omitted. */
  instructions?: string;
  /** Cancels a child still running after this many milliseconds (an error result); no limit when omitted. */
  timeoutMs?: number;
}

/** The arguments of the task tool. */
export interface TaskArguments {
  prompt: string;
  description?: string;
  tools?: string[];
  model?: string;
}

const defaultInstructions =
  'You are a subagent: another agent delegated one task to you. Work on it autonomously with your tools. ' +
  'Your final message is returned to that agent as your answer, so end with a complete, self-contained report.';

/**
 * Subagents: a concurrency-safe `task` tool that runs a prompt in a child agent (its own session, whose
 * header names the parent session and call), waits for it, and returns its final answer with its usage;
 * cancelling the parent cancels the child, and nesting is bounded.
 */
export function subagentsPlugin(options: SubagentsPluginOptions = {}): HarnessPlugin {
  const maxDepth = options.maxDepth ?? 2;
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 0) {
    throw new HarnessError('INVALID_OPTIONS', 'maxDepth must be a non-negative safe integer');
  }
  const toolName = options.toolName ?? 'task';
  if (options.timeoutMs !== undefined && !(Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) {
    throw new HarnessError('INVALID_OPTIONS', 'timeoutMs must be a positive number');
  }
  return {
    name: 'subagents',
    setup(host: PluginHost) {
      return host.tools.register(taskTool(host, { ...options, maxDepth, toolName }, pricingLookup(host.llm)));
    },
  };
}

type ResolvedOptions = SubagentsPluginOptions & { maxDepth: number; toolName: string };

function taskTool(host: PluginHost, options: ResolvedOptions, pricing: PricingLookup): Tool<TaskArguments> {
  return defineTool<TaskArguments>({
    name: options.toolName,
    description:
      'Delegate a self-contained task to a subagent with its own context. It works autonomously and ' +
      'returns its final report. Several task calls in one message run concurrently. Give it everything ' +
      'it needs in the prompt: it does not see this conversation.',
    effect: 'other',
    parameters: {
      type: 'object',
      properties: {
        prompt: { type: 'string', minLength: 1, description: 'The complete task for the subagent.' },
        description: { type: 'string', description: 'A short label for the task (3–6 words).' },
        tools: {
          type: 'array',
          items: { type: 'string' },
          description: 'Narrow the subagent to these tools (default: the same tools you have).',
        },
        model: { type: 'string', description: 'The model the subagent uses (default: yours).' },
      },
      required: ['prompt'],
      additionalProperties: false,
    },
    isConcurrencySafe: () => true,
    execute: (args, context) => runTask(host, options, pricing, args, context),
  });
}

async function runTask(
  host: PluginHost,
  options: ResolvedOptions,
  pricing: PricingLookup,
  args: TaskArguments,
  context: ToolContext,
): Promise<ToolOutput> {
  const parent = host.registry.get(context.sessionId);
  if (parent === undefined) {
    throw new ToolError('SUBAGENT_NO_PARENT', `no live agent owns session ${context.sessionId}`);
  }
  const depth = (parent.options.delegationDepth ?? 0) + 1;
  if (depth > options.maxDepth) {
    throw new ToolError(
      'DELEGATION_DEPTH_EXCEEDED',
      `subagents may nest at most ${options.maxDepth} deep; this task would start one at depth ${depth}. ` +
        'Do the work yourself instead.',
    );
  }
  const childOptions: AgentOptions = {
    parent,
    parentCallId: context.callId,
    delegationDepth: depth,
    instructions: options.instructions ?? defaultInstructions,
  };
  const tools = childTools(host, parent, options, args.tools, depth);
  if (tools !== undefined) childOptions.tools = tools;
  const provider = options.provider ?? parent.options.provider;
  const model = args.model ?? options.model ?? parent.options.model;
  if (provider !== undefined) childOptions.provider = provider;
  if (model !== undefined) childOptions.model = model;
  if (parent.options.cwd !== undefined) childOptions.cwd = parent.options.cwd;
  if (parent.options.maxParallelToolCalls !== undefined)
    childOptions.maxParallelToolCalls = parent.options.maxParallelToolCalls;
  throwIfAborted(context.signal);
  const child = await host.createAgent(childOptions);
  // The core cancels children with the parent; this also covers a cancel that raced the creation.
  const stop = (): void => child.cancel({ kind: 'parent' });
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          child.cancel({ kind: 'hook', reason: 'subagent timeout' });
        }, options.timeoutMs);
  try {
    context.signal.addEventListener('abort', stop, { once: true });
    if (!context.signal.aborted) child.followup(args.prompt);
    await child.whenIdle();
    context.signal.removeEventListener('abort', stop);
    if (timedOut && !context.signal.aborted) {
      throw new ToolError(
        'SUBAGENT_TIMEOUT',
        `the subagent did not finish within ${options.timeoutMs} ms and was stopped (subagent session ${child.id})`,
      );
    }
    return toResult(child, readChildOutcome(child.session, pricing), args.description, context.signal);
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener('abort', stop);
    await child.dispose();
  }
}

function toResult(
  child: Agent,
  outcome: ReturnType<typeof readChildOutcome>,
  description: string | undefined,
  signal: AbortSignal,
): ToolOutput {
  const meta: TaskResultMeta = { childSessionId: child.id, usage: outcome.usage };
  if (description !== undefined && description !== '') meta.description = description;
  if (outcome.costUsd !== undefined) meta.costUsd = outcome.costUsd;
  const reason = outcome.reason;
  if (signal.aborted) throwIfAborted(signal);
  const where = `(subagent session ${child.id})`;
  switch (reason?.kind) {
    case 'completed':
      return { content: outcome.text || `The subagent finished without a final answer ${where}.`, meta };
    case 'max-tokens':
      return {
        content: `${outcome.text}\n\n[The subagent's answer was cut off at its output token limit.]`.trim(),
        meta,
      };
    case 'error':
      throw new ToolError(
        'SUBAGENT_FAILED',
        `the subagent failed: ${reason.error.code}: ${reason.error.message} ${where}`,
      );
    case 'blocked':
      throw new ToolError(
        'SUBAGENT_BLOCKED',
        `the subagent was stopped before it finished (a guard or budget blocked its turn) ${where}` +
          (outcome.text !== '' ? `. Its last words: ${outcome.text}` : ''),
      );
    case 'aborted':
      throw new ToolError('SUBAGENT_CANCELLED', `the subagent was cancelled before it finished ${where}`);
    case 'interrupted':
    case undefined:
      throw new ToolError('SUBAGENT_FAILED', `the subagent did not finish its task ${where}`);
  }
}

function childTools(
  host: PluginHost,
  parent: Agent,
  options: ResolvedOptions,
  requested: readonly string[] | undefined,
  depth: number,
): readonly string[] | undefined {
  const parentSelection = parent.options.tools;
  if (requested !== undefined) {
    const unavailable = requested.filter((name) => host.tools.get(name, parentSelection) === undefined);
    if (unavailable.length > 0) {
      throw new ToolError(
        'SUBAGENT_TOOLS_UNAVAILABLE',
        `a subagent can only be given tools you have; unavailable: ${unavailable.join(', ')}`,
      );
    }
  }
  const selection = requested ?? options.tools ?? parentSelection;
  // At the depth limit the child could only fail to delegate, so it is not offered the task tool at all.
  if (depth < options.maxDepth) return selection;
  const names = selection ?? host.tools.list().map((tool) => tool.name);
  return names.filter((name) => name !== options.toolName);
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new DOMException('the parent turn was cancelled', 'AbortError');
}
