import type { HarnessPlugin, PluginHost } from '../../agent/index.ts';
import type { Disposer } from '../../hooks/index.ts';
import { HarnessError } from '../../llm/index.ts';
import type { Session } from '../../session/index.ts';
import type { PreToolDecision, Tool, ToolCallInfo } from '../../tools/index.ts';
import { parseToolArguments } from '../../tools/index.ts';
import type { PathGrant } from '../../tools/builtin/index.ts';
import { Workspace, runWithPathGrant } from '../../tools/builtin/index.ts';
import type { CallFacts, PathFact, PermissionMode, PermissionRule } from './permission-policy.ts';
import { evaluatePermission, permissionModes, sessionApprovalKey } from './permission-policy.ts';

/** Options of `permissionsPlugin`. */
export interface PermissionsOptions {
  mode: PermissionMode;
  rules?: readonly PermissionRule[];
  /** The workspace root the built-in tools are confined to. */
  workspace: string;
  /** Rein's home (protected); `REIN_HOME` or `~/.rein` by default, as for `builtinTools`. */
  reinHome?: string;
}

interface SessionState {
  scanned: number;
  readonly requests: Map<string, { name: string; arguments: string }>;
  readonly approvals: Set<string>;
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
  try {
    requested = tool?.paths?.(args) ?? [];
    command = tool?.command?.(args);
  } catch {
    // A tool whose declarations throw on these arguments touches nothing the policy can name.
  }
  const paths: PathFact[] = requested.map((path) => {
    try {
      const resolved = workspace.resolve(path);
      return { requested: path, real: resolved.real, zone: resolved.zone, display: resolved.display };
    } catch (error) {
      return { requested: path, invalid: error instanceof Error ? error.message : String(error) };
    }
  });
  return {
    tool: name,
    effect: tool?.effect ?? 'other',
    paths,
    ...(command !== undefined ? { command } : {}),
  };
}

function combine(ours: PreToolDecision, inner: PreToolDecision): PreToolDecision {
  if (inner.kind === 'deny') return inner;
  if (ours.kind === 'ask') return ours;
  return inner;
}

/**
 * The approval policy on `tools/pre-execute`: rules and mode decide allow, deny or ask (the pipeline
 * records and routes the question); `allow-session` answers found on the log let identical calls run
 * for the rest of the session; outside paths of permitted calls are granted to their tool bodies.
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

      // Reads the log since the last look: allow-session answers become approvals of identical calls.
      const approvalsOf = (session: Session): Set<string> => {
        let state = sessions.get(session.id);
        if (state === undefined) {
          state = { scanned: 0, requests: new Map(), approvals: new Set() };
          sessions.set(session.id, state);
        }
        const log = session.log;
        for (; state.scanned < log.length; state.scanned++) {
          const type = log.typeAt(state.scanned);
          if (type !== 'tool/approval-requested' && type !== 'tool/approval-decided') continue;
          const event = log.at(state.scanned)!;
          if (event.type === 'tool/approval-requested') {
            const data = event.data as { requestId: string; name: string; arguments: string };
            state.requests.set(data.requestId, { name: data.name, arguments: data.arguments });
          } else if (event.type === 'tool/approval-decided') {
            const data = event.data as { requestId: string; decision: string };
            const request = state.requests.get(data.requestId);
            state.requests.delete(data.requestId);
            if (data.decision !== 'allow-session' || request === undefined) continue;
            const tool = host.tools.get(request.name, undefined, session.id);
            const facts = callFacts(workspace, tool, request.name, parseToolArguments(request.arguments));
            state.approvals.add(sessionApprovalKey(facts));
          }
        }
        return state.approvals;
      };

      const disposers: Disposer[] = [
        host.hooks.on('tools/pre-execute', async (payload, next) => {
          const { call, session } = payload;
          const facts = callFacts(workspace, call.tool, call.name, call.args);
          const verdict = evaluatePermission(facts, {
            mode: options.mode,
            rules,
            sessionApprovals: approvalsOf(session),
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
