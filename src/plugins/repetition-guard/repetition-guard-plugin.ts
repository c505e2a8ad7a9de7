import type { HarnessPlugin, PluginHost } from '../../agent/index.ts';
import { reject } from '../../agent/index.ts';
import { HarnessError, createUserMessage } from '../../llm/index.ts';
import type { SessionEventMap } from '../../session/index.ts';
import { callFingerprint } from './call-fingerprint.ts';
import './guard-events.ts';

/** Options of `repetitionGuardPlugin`. */
export interface RepetitionGuardOptions {
  /** The identical mutating call (in one turn) that earns a nudge; 3 by default. */
  nudgeAt?: number;
  /** The identical mutating call (in one turn) after which the turn stops; 5 by default. */
  stopAt?: number;
}

interface TurnState {
  readonly turn: number;
  readonly counts: Map<string, number>;
  readonly nudges: Set<string>;
  stop: { fingerprint: string; count: number; name: string } | undefined;
}

/**
 * A repetition guard: counts identical calls (name plus canonical arguments) of mutating tools per turn,
 * reading each tool's declared `effect` and `polling` (reads and polling tools are exempt); it injects a
 * nudge at `nudgeAt` and, at `stopAt`, rejects the next step with a durable `guard/stopped`, keeping
 * queued input.
 */
export function repetitionGuardPlugin(options: RepetitionGuardOptions = {}): HarnessPlugin {
  const nudgeAt = options.nudgeAt ?? 3;
  const stopAt = options.stopAt ?? 5;
  for (const [name, value] of [
    ['nudgeAt', nudgeAt],
    ['stopAt', stopAt],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 2) {
      throw new HarnessError('INVALID_OPTIONS', `${name} must be an integer of at least 2`);
    }
  }
  return {
    name: 'repetition-guard',
    setup(host: PluginHost) {
      const turns = new Map<string, TurnState>();
      const disposers = [
        host.hooks.on('session/event', ({ session, event }) => {
          switch (event.type) {
            case 'turn/start':
              turns.set(session.id, {
                turn: (event.data as SessionEventMap['turn/start']).turn,
                counts: new Map(),
                nudges: new Set(),
                stop: undefined,
              });
              return;
            case 'turn/end':
              turns.delete(session.id);
              return;
            case 'tool/call': {
              const state = turns.get(session.id);
              if (state === undefined) return;
              const call = event.data as SessionEventMap['tool/call'];
              const tool = host.tools.get(call.name, undefined, session.id);
              // Reads and declared polling tools repeat by design; an unknown tool counts as mutating.
              if (tool?.polling === true || tool?.effect === 'read') return;
              const fingerprint = callFingerprint(call.name, call.arguments);
              const count = (state.counts.get(fingerprint) ?? 0) + 1;
              state.counts.set(fingerprint, count);
              if (count >= stopAt) {
                state.stop = { fingerprint, count, name: call.name };
              } else if (count === nudgeAt) {
                const agent = host.registry.get(session.id);
                if (agent === undefined || agent.disposed) return;
                const nudge = agent.inject(
                  createUserMessage(
                    `You have now called ${call.name} ${count} times in this turn with identical arguments. ` +
                      'Repeating the same call will not change its outcome. Check whether the earlier calls ' +
                      'already did what you need, try a different approach, or tell the user what blocks you. ' +
                      `The turn stops at ${stopAt} identical calls.`,
                    { kind: 'plugin', plugin: 'repetition-guard', form: 'nudge', fingerprint, count },
                  ),
                );
                state.nudges.add(nudge.id);
              }
              return;
            }
            default:
              return;
          }
        }),
        host.hooks.on('agent/pre-step', (payload, next) => {
          const { agent } = payload;
          const state = turns.get(agent.id);
          const stop = state?.turn === payload.turn ? state.stop : undefined;
          if (state === undefined || stop === undefined) return next();
          agent.session.append('guard/stopped', {
            turn: payload.turn,
            fingerprint: stop.fingerprint,
            count: stop.count,
            name: stop.name,
            message:
              `Stopped: ${stop.name} was called ${stop.count} times in this turn with identical arguments. ` +
              'Queued messages are kept; send a message to continue differently.',
          });
          // The claimed input goes back to the head of next-step; only the guard's own nudges are dropped.
          const kept = payload.messages.filter((message) => !state.nudges.has(message.id));
          if (kept.length > 0) agent.inbox.splice('next-step', 0, 0, kept);
          return reject();
        }),
      ];
      return () => {
        for (const dispose of disposers.splice(0)) dispose();
        turns.clear();
      };
    },
  };
}
