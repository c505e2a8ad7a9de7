import type { SessionUpdate, ToolCallStatus } from '@agentclientprotocol/sdk';
import type {
  AnySessionEvent,
  AssistantMessage,
  ContentBlock,
  PricingLookup,
  SessionEventMap,
  Tool,
  TodoItem,
  TokenUsage,
  TurnEndReason,
  UserMessage,
} from '../index.ts';
import { costOf } from '../index.ts';
import type { ToolPresentation } from './tool-presentation.ts';
import { presentToolCall, resultContent, resultText } from './tool-presentation.ts';

/** What the translation needs to know about the session's world. */
export interface UpdateContext {
  /** The session's workspace: relative tool paths resolve against it. */
  readonly cwd: string;
  /** The tool a call names (its declared properties shape the card). */
  tool(name: string): Tool | undefined;
  /** Model prices, for the session's running cost. */
  readonly pricing: PricingLookup;
}

/**
 * Translates a session's durable events, in seq order, into ACP `session/update`s. `live` streams the
 * model's deltas as they come; `replay` shows each finished message whole and the user's own prompts.
 */
export class SessionUpdates {
  readonly #context: UpdateContext;
  readonly #mode: 'live' | 'replay';
  readonly #calls = new Map<string, ToolPresentation>();
  #contextWindow: number | undefined;
  #cost = 0;
  #priced = false;

  constructor(context: UpdateContext, mode: 'live' | 'replay') {
    this.#context = context;
    this.#mode = mode;
  }

  /** The card of a call seen in `tool/call`, if it has no result yet. */
  presentation(callId: string): ToolPresentation | undefined {
    return this.#calls.get(callId);
  }

  /** The updates one durable event gives (often none). */
  translate(event: AnySessionEvent): SessionUpdate[] {
    switch (event.type) {
      case 'assistant/chunk':
        return this.#mode === 'live' ? this.#chunk(event.data as SessionEventMap['assistant/chunk']) : [];
      case 'assistant/message':
        return this.#message(event.data as SessionEventMap['assistant/message']);
      case 'user/message':
        return this.#mode === 'replay' ? userUpdates(event.data as UserMessage) : [];
      case 'request/context':
        this.#contextWindow = (event.data as SessionEventMap['request/context']).contextWindow;
        return [];
      case 'tool/call':
        return [this.#call(event.data as SessionEventMap['tool/call'])];
      case 'tool/result':
        return this.#result(event.data as SessionEventMap['tool/result']);
      case 'todo/write':
        return [planUpdate((event.data as { todos: TodoItem[] }).todos)];
      case 'turn/end':
        return this.#mode === 'replay' ? turnEndNotes((event.data as { reason: TurnEndReason }).reason) : [];
      default:
        return [];
    }
  }

  /** The update that marks a call as running. */
  started(callId: string): SessionUpdate {
    return { sessionUpdate: 'tool_call_update', toolCallId: callId, status: 'in_progress' };
  }

  #chunk(data: SessionEventMap['assistant/chunk']): SessionUpdate[] {
    const chunk = data.chunk;
    if (chunk.type === 'text-delta' && chunk.text !== '') {
      return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: chunk.text } }];
    }
    if (chunk.type === 'reasoning-delta' && chunk.text !== '') {
      return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: chunk.text } }];
    }
    return [];
  }

  #message(data: SessionEventMap['assistant/message']): SessionUpdate[] {
    const updates: SessionUpdate[] =
      this.#mode === 'replay' ? assistantUpdates(data.message as AssistantMessage) : [];
    if (data.usage !== undefined) {
      const usage = this.#usage(data.usage, data.message.source);
      if (usage !== undefined) updates.push(usage);
    }
    return updates;
  }

  #usage(usage: TokenUsage, source: AssistantMessage['source']): SessionUpdate | undefined {
    const pricing = this.#context.pricing(source.provider, source.model);
    if (pricing !== undefined) {
      this.#cost += costOf(usage, pricing);
      this.#priced = true;
    }
    if (this.#contextWindow === undefined) return undefined;
    const used =
      usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + usage.outputTokens;
    return {
      sessionUpdate: 'usage_update',
      used,
      size: this.#contextWindow,
      ...(this.#priced ? { cost: { amount: this.#cost, currency: 'USD' } } : {}),
    };
  }

  #call(data: SessionEventMap['tool/call']): SessionUpdate {
    const presentation = presentToolCall(
      this.#context.tool(data.name),
      data.name,
      data.arguments,
      this.#context.cwd,
    );
    this.#calls.set(data.callId, presentation);
    return {
      sessionUpdate: 'tool_call',
      toolCallId: data.callId,
      title: presentation.title,
      kind: presentation.kind,
      status: 'pending',
      locations: presentation.locations,
      content: presentation.diffs,
      rawInput: presentation.rawInput,
    };
  }

  #result(data: SessionEventMap['tool/result']): SessionUpdate[] {
    const block = data.message.content[0];
    if (block?.type !== 'tool-result') return [];
    const presentation = this.#calls.get(block.toolCallId);
    this.#calls.delete(block.toolCallId);
    const isError = block.isError === true;
    const status: ToolCallStatus = isError ? 'failed' : 'completed';
    const text = resultText(block.content);
    return [
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: block.toolCallId,
        status,
        content:
          presentation !== undefined
            ? resultContent(presentation, text, isError)
            : [{ type: 'content', content: { type: 'text', text } }],
        ...(data.meta !== undefined ? { rawOutput: data.meta } : {}),
      },
    ];
  }
}

function textOf(blocks: readonly ContentBlock[], type: 'text' | 'reasoning'): string {
  let text = '';
  for (const block of blocks) if (block.type === type) text += block.text;
  return text;
}

function userUpdates(message: UserMessage): SessionUpdate[] {
  // Tool results and plugin context ride user-role messages; only what a person wrote is shown.
  if (message.source.kind !== 'user' && message.source.kind !== 'steer') return [];
  const updates: SessionUpdate[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && block.text !== '') {
      updates.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: block.text } });
    } else if (block.type === 'image' && block.data !== undefined) {
      updates.push({
        sessionUpdate: 'user_message_chunk',
        content: { type: 'image', data: block.data, mimeType: block.mediaType },
      });
    }
  }
  return updates;
}

function assistantUpdates(message: AssistantMessage): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  const thought = textOf(message.content, 'reasoning');
  if (thought !== '') {
    updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: thought } });
  }
  const text = textOf(message.content, 'text');
  if (text !== '') updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
  return updates;
}

/** The `plan` update of a task list snapshot. */
export function planUpdate(todos: readonly TodoItem[]): SessionUpdate {
  return {
    sessionUpdate: 'plan',
    entries: todos.map((todo) => ({ content: todo.content, status: todo.status, priority: 'medium' })),
  };
}

function turnEndNotes(reason: TurnEndReason): SessionUpdate[] {
  if (reason.kind !== 'error') return [];
  return [
    {
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: `\n\n[error ${reason.error.code}: ${reason.error.message}]` },
    },
  ];
}
