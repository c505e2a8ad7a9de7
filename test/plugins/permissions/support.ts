import type {
  Agent,
  ApprovalDecision,
  ApprovalRequest,
  Harness,
  PermissionMode,
  PermissionRule,
} from '../../../src/index.ts';
import { builtinTools, createHarness, permissionsPlugin } from '../../../src/index.ts';
import type { ScriptedTurn } from '../../../src/testing/index.ts';
import { ScriptedProvider } from '../../../src/testing/index.ts';

/** A harness with the built-in tools and the permissions plugin over a scripted model, and one agent. */
export interface PermissionFixture {
  harness: Harness;
  model: ScriptedProvider;
  agent: Agent;
  /** Every approval request an attached approver heard, in order. */
  asked: ApprovalRequest[];
}

/** Builds the fixture; `approver` (when given) is attached and answers each request. */
export async function permissionFixture(options: {
  workspace: string;
  reinHome: string;
  mode: PermissionMode;
  rules?: PermissionRule[];
  responses: ScriptedTurn[];
  /** Run the built-in bash inside the bubblewrap sandbox. */
  sandbox?: boolean;
  approver?: (
    request: ApprovalRequest,
    signal: AbortSignal,
  ) => ApprovalDecision | Promise<ApprovalDecision> | void;
}): Promise<PermissionFixture> {
  const model = new ScriptedProvider({ responses: options.responses, fallback: { text: 'done' } });
  const harness = createHarness({
    providers: [model],
    tools: builtinTools({
      workspace: options.workspace,
      reinHome: options.reinHome,
      ...(options.sandbox === true ? { sandbox: true } : {}),
    }),
    plugins: [
      permissionsPlugin({
        mode: options.mode,
        workspace: options.workspace,
        reinHome: options.reinHome,
        ...(options.rules !== undefined ? { rules: options.rules } : {}),
      }),
    ],
    onListenerError: (event, error) => {
      throw new Error(`listener of ${event} failed: ${String(error)}`);
    },
  });
  const asked: ApprovalRequest[] = [];
  const approver = options.approver;
  if (approver !== undefined) {
    harness.approvals.attach({
      notify: (request, signal) => {
        asked.push(request);
        const answer = approver(request, signal);
        return answer instanceof Promise ? answer : Promise.resolve(answer);
      },
    });
  }
  const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model' });
  return { harness, model, agent, asked };
}

/** One logged tool result, flattened. */
export interface LoggedResult {
  callId: string;
  text: string;
  isError: boolean;
  code: string | undefined;
}

/** The tool results of an agent's log, in order. */
export function loggedResults(agent: Agent): LoggedResult[] {
  return agent.session.events
    .filter((event) => event.type === 'tool/result')
    .map((event) => {
      const data = event.data as {
        message: {
          content: { toolCallId: string; isError?: boolean; content: { type: string; text?: string }[] }[];
        };
        error?: { code: string };
      };
      const block = data.message.content[0]!;
      return {
        callId: block.toolCallId,
        text: block.content.map((part) => part.text ?? '').join(''),
        isError: block.isError === true,
        code: data.error?.code,
      };
    });
}
