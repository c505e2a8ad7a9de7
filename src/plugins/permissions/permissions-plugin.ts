import { lstatSync } from 'node:fs';
import type { HarnessPlugin, PluginHost } from '../../agent/index.ts';
import type { Disposer } from '../../hooks/index.ts';
import { HarnessError } from '../../llm/index.ts';
import type { Session } from '../../session/index.ts';
import { registerSessionEventTypes } from '../../session/index.ts';
import type { PreToolDecision, Tool, ToolCallInfo, ToolConfinement } from '../../tools/index.ts';
import { parseToolArguments } from '../../tools/index.ts';
import type { PathGrant } from '../../tools/builtin/index.ts';
import { Workspace, runWithPathGrant } from '../../tools/builtin/index.ts';
import type { CallFacts, PathFact, PermissionMode, PermissionRule } from './permission-policy.ts';
import { evaluatePermission, permissionModes, sessionApprovalKey } from './permission-policy.ts';

// The events a session's approval state is read from.
const approvalTypes: ReadonlySet<string> = new Set([
  'permissions/mode',
  'tool/approval-requested',
  'tool/approval-decided',
]);
/** Options of `permissionsPlugin`. */
export interface PermissionsOptions {
  mode: PermissionMode;
  rules?: readonly PermissionRule[];
  /** The workspace root the built-in tools are confined to. */
  workspace: string;
  /** Rein's home (protected); `REIN_HOME` or `~/.rein` by default, as for `builtinTools`. */
  reinHome?: string;
}

declare module '../../session/session-event.ts' {
  interface SessionEventMap {
    /** The session's approval mode from here on (overrides the plugin's mode for this session and its subagents). */
    'permissions/mode': { mode: PermissionMode };
  }
}

registerSessionEventTypes(['permissions/mode']);

interface SessionState {
  scanned: number;
  readonly requests: Map<string, { name: string; arguments: string }>;
  readonly approvals: Set<string>;
  readonly denials: Set<string>;
  mode: PermissionMode | undefined;
}

/**
 * Switches a session's approval mode durably (a `permissions/mode` record the plugin reads before the
 * next call); throws HarnessError `INVALID_OPTIONS` for an unknown mode.
 */
export function setPermissionMode(session: Session, mode: PermissionMode): void {
  if (!permissionModes.includes(mode)) {
    throw new HarnessError('INVALID_OPTIONS', `unknown permission mode ${JSON.stringify(mode)}`);
  }
  session.append('permissions/mode', { mode });
}

/** The approval mode a session's log last set with `setPermissionMode`, or undefined. */
export function permissionModeOf(session: Pick<Session, 'log'>): PermissionMode | undefined {
  const log = session.log;
  for (let index = log.length - 1; index >= 0; index--) {
    if (log.typeAt(index) !== 'permissions/mode') continue;
    return (log.at(index)!.data as { mode: PermissionMode }).mode;
  }
  return undefined;
}

/** The facts of a call, read from the tool's declared properties (`effect`, `paths`, `command`). */
export function callFacts(
  workspace: Workspace,
  tool: Tool | undefined,
  name: string,
  args: unknown,
): CallFacts {
  let requested: string[] = [];
  let command: string | undefined;
  let confinement: ToolConfinement | undefined;
  try {
    requested = tool?.paths?.(args) ?? [];
    command = tool?.command?.(args);
    confinement = tool?.confinement?.(args);
  } catch {
    // A tool whose declarations throw on these arguments touches nothing the policy can name.
  }
  const paths: PathFact[] = requested.map((path) => {
    try {
      const resolved = workspace.resolve(path);
      const links = hardLinkCount(resolved.real);
      return {
        requested: path,
        real: resolved.real,
        zone: resolved.zone,
        display: resolved.display,
        ...(links > 1 ? { hardLinks: links } : {}),
      };
    } catch (error) {
      return { requested: path, invalid: error instanceof Error ? error.message : String(error) };
    }
  });
  return {
    tool: name,
    effect: tool?.effect ?? 'other',
    paths,
    ...(command !== undefined ? { command } : {}),
    ...(confinement !== undefined ? { confinement } : {}),
  };
}

// The link count of a regular file (1 for anything else, or when it cannot be looked at).
function hardLinkCount(real: string): number {
  try {
    const stat = lstatSync(real);
    return stat.isFile() ? stat.nlink : 1;
  } catch {
    // Missing (a file about to be created) or unreadable: no shared inode to worry about.
    return 1;
  }
}

function combine(ours: PreToolDecision, inner: PreToolDecision): PreToolDecision {
  if (inner.kind === 'deny') return inner;
  if (ours.kind === 'ask') return ours;
  return inner;
}

/**
 * The approval policy on `tools/pre-execute`: rules and mode decide allow, deny or ask (the pipeline
 * records and routes the question); `allow-session` / `deny-session` answers found on the log decide
 * identical calls for the rest of the session, and a `permissions/mode` record sets the session's mode;
 * outside paths of permitted calls are granted to their tool bodies.
 */
export function permissionsPlugin(options: PermissionsOptions): HarnessPlugin {
  if (!permissionModes.includes(options.mode)) {
    throw new HarnessError('INVALID_OPTIONS', `unknown permission mode ${JSON.stringify(options.mode)}`);
  }
  for (const rule of options.rules ?? []) {
    if (rule.decision !== 'allow' && rule.decision !== 'deny') {
      throw new HarnessError('INVALID_OPTIONS', `a permission rule needs decision 'allow' or 'deny'`);
    }
  }
  const rules = [...(options.rules ?? [])];
  return {
    name: 'permissions',
    setup(host: PluginHost): Disposer {
      const workspace = new Workspace({
        root: options.workspace,
        ...(options.reinHome !== undefined ? { reinHome: options.reinHome } : {}),
      });
      const sessions = new Map<string, SessionState>();
      const grants = new Map<string, PathGrant>();
      const grantKey = (call: ToolCallInfo): string => `${call.sessionId}\u0000${call.callId}`;

      // Reads the log since the last look: session answers decide identical calls; mode records set the mode.
      const approvalsOf = (session: Session): SessionState => {
        let state = sessions.get(session.id);
        if (state === undefined) {
          state = {
            scanned: 0,
            requests: new Map(),
            approvals: new Set(),
            denials: new Set(),
            mode: undefined,
          };
          sessions.set(session.id, state);
        }
        const log = session.log;
        const length = log.length;
        for (
          let seq = log.nextOfType(approvalTypes, state.scanned);
          seq >= 0;
          seq = log.nextOfType(approvalTypes, seq + 1)
        ) {
          const event = log.at(seq)!;
          if (event.type === 'permissions/mode') {
            state.mode = (event.data as { mode: PermissionMode }).mode;
            continue;
          }
          if (event.type === 'tool/approval-requested') {
            const data = event.data as { requestId: string; name: string; arguments: string };
            state.requests.set(data.requestId, { name: data.name, arguments: data.arguments });
          } else if (event.type === 'tool/approval-decided') {
            const data = event.data as { requestId: string; decision: string };
            const request = state.requests.get(data.requestId);
            state.requests.delete(data.requestId);
            const remembered =
              data.decision === 'allow-session'
                ? state.approvals
                : data.decision === 'deny-session'
                  ? state.denials
                  : undefined;
            if (remembered === undefined || request === undefined) continue;
            const tool = host.tools.get(request.name, undefined, session.id);
            const facts = callFacts(workspace, tool, request.name, parseToolArguments(request.arguments));
            remembered.add(sessionApprovalKey(facts));
          }
        }
        state.scanned = length;
        return state;
      };

      const disposers: Disposer[] = [
        host.hooks.on('tools/pre-execute', async (payload, next) => {
          const { call, session } = payload;
          const facts = callFacts(workspace, call.tool, call.name, call.args);
          const state = approvalsOf(session);
          if (state.denials.has(sessionApprovalKey(facts))) {
            return {
              kind: 'deny',
              reason: `the user denied ${call.name} with these arguments for this session`,
            };
          }
          const parent = session.header.parentSession;
          const verdict = evaluatePermission(facts, {
            mode:
              state.mode ?? (parent !== undefined ? sessions.get(parent)?.mode : undefined) ?? options.mode,
            rules,
            sessionApprovals: state.approvals,
          });
          if (verdict.decision.kind === 'deny') return verdict.decision;
          const decision = combine(verdict.decision, await next());
          if (decision.kind !== 'deny' && (verdict.grant.read.length > 0 || verdict.grant.write.length > 0)) {
            grants.set(grantKey(call), verdict.grant);
          }
          return decision;
        }),
        // Reaching execution means the call was allowed (by rule, mode or a human): grant its outside paths.
        host.hooks.on('tools/execute', (payload, next) => {
          const grant = grants.get(grantKey(payload.call));
          return grant === undefined ? next() : runWithPathGrant(grant, next);
        }),
        host.hooks.on('tools/result', ({ call }) => {
          grants.delete(grantKey(call));
        }),
        host.hooks.on('agent/disposed', ({ agent }) => {
          sessions.delete(agent.id);
        }),
      ];
      return () => {
        for (const dispose of disposers.splice(0).reverse()) dispose();
        sessions.clear();
        grants.clear();
      };
    },
  };
}
