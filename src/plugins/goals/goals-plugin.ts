import { randomUUID } from 'node:crypto';
import type { Agent, AgentRegistry, HarnessPlugin, PluginHost } from '../../agent/index.ts';
import type { ToolResultMessage } from '../../llm/index.ts';
import { HarnessError, createUserMessage } from '../../llm/index.ts';
import type { Session, SessionEventMap } from '../../session/index.ts';
import type { Tool } from '../../tools/index.ts';
import { ToolError, defineTool } from '../../tools/index.ts';
import type { GoalStopReason } from './goal-events.ts';
import type { ActiveGoal } from './goal-state.ts';
import { readActiveGoal, reviewRound } from './goal-state.ts';

/** Options of `goalsPlugin`. */
export interface GoalsPluginOptions {
  /** Continuation rounds a goal may spend unless `setGoal` says otherwise; 10 by default. */
  maxRounds?: number;
  /** The name of the completion tool; `goal_complete` by default. */
  toolName?: string;
}

/** Options of `setGoal`. */
export interface SetGoalOptions {
  /** Continuation rounds this goal may spend (a non-negative safe integer); the plugin's default when omitted. */
  maxRounds?: number;
  /** Queue the objective as a prompt so work starts now (default true); false only records the goal. */
  start?: boolean;
}

/** A goal as the SDK reports it. */
export interface Goal {
  readonly goalId: string;
  readonly objective: string;
  readonly maxRounds: number;
  /** Continuation rounds spent so far. */
  readonly rounds: number;
}

interface Installation {
  readonly registry: AgentRegistry;
  readonly maxRounds: number;
  readonly toolName: string;
}

// Where `setGoal` finds the plugin that governs an agent: the installation whose registry holds it.
const installations = new Set<Installation>();

const defaultMaxRounds = 10;

/**
 * Goal continuation: while a goal is active, `agent/turn-stopping` steers a continuation (source kind
 * `goal`) until the model calls the completion tool; bounded by a round limit, a no-progress stop and
 * cancellation, each recorded durably.
 */
export function goalsPlugin(options: GoalsPluginOptions = {}): HarnessPlugin {
  const maxRounds = options.maxRounds ?? defaultMaxRounds;
  assertRounds(maxRounds);
  const toolName = options.toolName ?? 'goal_complete';
  return {
    name: 'goals',
    setup(host: PluginHost) {
      const installation: Installation = { registry: host.registry, maxRounds, toolName };
      // Completions wait for their tool/result to commit, so an aborted or rewritten call completes nothing.
      const pending = new Map<string, { goalId: string; evidence: string }>();
      const disposers = [
        host.tools.register(completionTool(toolName, pending)),
        host.hooks.on('agent/turn-stopping', ({ agent, turn, signal }) => {
          if (signal.aborted) return;
          continueGoal(agent, turn, toolName);
        }),
        host.hooks.on('session/event', ({ session, event }) => {
          if (event.type === 'agent/cancelled') {
            const cause = (event.data as SessionEventMap['agent/cancelled']).cause;
            // Disposal is not a decision about the goal: a resumed session keeps pursuing it.
            if (cause.kind === 'disposed') return;
            const goal = readActiveGoal(session);
            if (goal !== undefined) stopGoal(session, goal, 'cancelled');
            return;
          }
          if (event.type !== 'tool/result' || typeof event.surfaceOp === 'object') return;
          const data = event.data as SessionEventMap['tool/result'];
          const key = pendingKey(session.id, data.message.source.callId);
          const completion = pending.get(key);
          if (completion === undefined) return;
          pending.delete(key);
          if (data.error !== undefined || isErrorResult(data.message)) return;
          const goal = readActiveGoal(session);
          if (goal?.goalId !== completion.goalId) return;
          session.append('goal/completed', {
            goalId: goal.goalId,
            callId: data.message.source.callId,
            evidence: completion.evidence,
            rounds: goal.rounds,
          });
        }),
      ];
      installations.add(installation);
      return () => {
        installations.delete(installation);
        for (const dispose of disposers.splice(0)) dispose();
      };
    },
  };
}

/** Sets the agent's goal (stopping a previous one as `replaced`) and, unless `start: false`, queues it as a prompt. */
export function setGoal(agent: Agent, objective: string, options: SetGoalOptions = {}): Goal {
  const installation = installationOf(agent);
  if (typeof objective !== 'string' || objective.trim() === '') {
    throw new HarnessError('INVALID_GOAL', 'a goal needs a non-empty objective');
  }
  const maxRounds = options.maxRounds ?? installation.maxRounds;
  assertRounds(maxRounds);
  if (agent.disposed) throw new HarnessError('AGENT_DISPOSED', `agent ${agent.id} is disposed`);
  const previous = readActiveGoal(agent.session);
  if (previous !== undefined) stopGoal(agent.session, previous, 'replaced');
  const goalId = randomUUID();
  const text = objective.trim();
  agent.session.append('goal/set', { goalId, objective: text, maxRounds });
  if (options.start !== false) {
    agent.followup(
      createUserMessage(
        `Goal: ${text}\n\nWork toward this goal. When it is fully achieved, call ${installation.toolName} ` +
          'with concrete evidence: what you did and how you verified it.',
        { kind: 'goal', goalId, form: 'objective' },
      ),
    );
  }
  return { goalId, objective: text, maxRounds, rounds: 0 };
}

/** Stops the agent's active goal as `cleared`; false when none was active. */
export function clearGoal(agent: Agent): boolean {
  const goal = readActiveGoal(agent.session);
  if (goal === undefined) return false;
  stopGoal(agent.session, goal, 'cleared');
  return true;
}

/** The agent's active goal, read from its log (so it survives a resume); undefined when none. */
export function activeGoal(agent: Agent): Goal | undefined {
  const goal = readActiveGoal(agent.session);
  if (goal === undefined) return undefined;
  return { goalId: goal.goalId, objective: goal.objective, maxRounds: goal.maxRounds, rounds: goal.rounds };
}

function continueGoal(agent: Agent, turn: number, toolName: string): void {
  const session = agent.session;
  const goal = readActiveGoal(session);
  if (goal === undefined) return;
  const review = reviewRound(session, goal, turn);
  if (!review.applies) return;
  if (!review.progress) {
    stopGoal(session, goal, 'no-progress');
    return;
  }
  if (goal.rounds >= goal.maxRounds) {
    stopGoal(session, goal, 'round-limit');
    return;
  }
  // Queued user input goes first: its turn ends at this gate again, and the goal continues from there.
  if (agent.inbox.size('next-turn') > 0) return;
  const round = goal.rounds + 1;
  session.append('goal/continued', { goalId: goal.goalId, round });
  agent.steer(
    createUserMessage(
      `Goal (continuation ${round} of ${goal.maxRounds}): ${goal.objective}\n\n` +
        `The goal is not marked complete. If it is fully achieved, call ${toolName} with your evidence; ` +
        'otherwise keep working toward it now.',
      { kind: 'goal', goalId: goal.goalId, round },
    ),
  );
}

function stopGoal(session: Session, goal: ActiveGoal, reason: GoalStopReason): void {
  session.append('goal/stopped', { goalId: goal.goalId, reason, rounds: goal.rounds });
}

function completionTool(
  name: string,
  pending: Map<string, { goalId: string; evidence: string }>,
): Tool<{ evidence: string }> {
  return defineTool<{ evidence: string }>({
    name,
    description:
      'Declare the active goal achieved. Call it only when the objective is fully met, with concrete ' +
      'evidence (what was done and how it was verified). This ends the turn.',
    // It changes only the harness's own goal state, never the workspace, so policies need not ask.
    effect: 'read',
    parameters: {
      type: 'object',
      properties: {
        evidence: { type: 'string', minLength: 1, description: 'What was done and how it was verified.' },
      },
      required: ['evidence'],
      additionalProperties: false,
    },
    execute(args, context) {
      const goal = readActiveGoal(context.session);
      if (goal === undefined) throw new ToolError('NO_ACTIVE_GOAL', 'there is no active goal to complete');
      pending.set(pendingKey(context.sessionId, context.callId), {
        goalId: goal.goalId,
        evidence: args.evidence,
      });
      return {
        content: `Goal complete: ${goal.objective}`,
        meta: { goalId: goal.goalId },
        concludesTurn: true,
      };
    },
  });
}

function installationOf(agent: Agent): Installation {
  for (const installation of installations) {
    if (installation.registry.get(agent.id) === agent) return installation;
  }
  throw new HarnessError('GOALS_NOT_INSTALLED', `no goals plugin governs agent ${agent.id}`);
}

function assertRounds(rounds: number): void {
  if (!Number.isSafeInteger(rounds) || rounds < 0) {
    throw new HarnessError('INVALID_GOAL', 'maxRounds must be a non-negative safe integer');
  }
}

function pendingKey(sessionId: string, callId: string): string {
  return `${sessionId}\u0000${callId}`;
}

function isErrorResult(message: ToolResultMessage): boolean {
  const block = message.content[0];
  return block?.type === 'tool-result' && block.isError === true;
}
