import type { SessionUpdate, ToolCall, ToolCallStatus } from '@agentclientprotocol/sdk';
import type {
  AnySessionEvent,
  AssistantItem,
  PricingLookup,
  StreamChunk,
  Tool,
  ToolCard,
  TranscriptItem,
  UserItem,
} from '../index.ts';
import { Transcript, defaultRecordViews } from '../index.ts';
import type { ToolPresentation } from './tool-presentation.ts';
import { presentToolCall, resultContent } from './tool-presentation.ts';

/** What the translation needs to know about the session's world. */
export interface UpdateContext {
  /** The session's workspace: relative tool paths resolve against it. */
  readonly cwd: string;
  /** The tool a call names (its declared properties shape the card). */
  tool(name: string): Tool | undefined;
  /** Model prices, for the session's running cost. */
  readonly pricing: PricingLookup;
}

type TodoList = Transcript['todos'];

/**
 * The live translation of a session into ACP `session/update`s, read off the one transcript fold: each
 * durable event is applied to the session's `Transcript`, and the items it touched become updates —
 * the new part of a streaming answer or its reasoning, a tool card's first sight and its result, the
 * task list as a `plan`, usage after each answer.
 */
export class SessionUpdates {
  readonly #context: UpdateContext;
  readonly #transcript: Transcript;
  // Per answer item: the characters of each block already sent.
  readonly #sentText = new Map<AssistantItem, number[]>();
  readonly #reported = new Set<AssistantItem>();
  readonly #cards = new Map<string, ToolPresentation>();
  #todos: TodoList;
  #contextWindow: number | undefined;

  constructor(context: UpdateContext, log: Iterable<AnySessionEvent> = []) {
    this.#context = context;
    // The fold starts from what the log already holds (a loaded session): only later events stream.
    this.#transcript = Transcript.of(log, { views: defaultRecordViews });
    this.#todos = this.#transcript.todos;
    for (const item of this.#transcript.items) {
      if (item.kind === 'assistant') this.#reported.add(item);
      if (item.kind === 'tool' && item.result === undefined)
        this.#cards.set(item.callId, this.#present(item));
    }
  }

  /** The presentation of a call whose card is open (seen, no result yet). */
  presentation(callId: string): ToolPresentation | undefined {
    return this.#cards.get(callId);
  }

  /** The update that marks a call as running (its body started). */
  started(callId: string): SessionUpdate {
    return { sessionUpdate: 'tool_call_update', toolCallId: callId, status: 'in_progress' };
  }

  /** The updates one durable event gives (often none). */
  translate(event: AnySessionEvent): SessionUpdate[] {
    if (event.type === 'request/context') {
      this.#contextWindow = (event.data as { contextWindow?: number }).contextWindow;
    }
    const touched = this.#transcript.apply(event);
    if (touched === undefined) return [];
    const updates: SessionUpdate[] = [];
    for (const item of touched) {
      if (item.kind === 'assistant') this.#answer(item, event, updates);
      else if (item.kind === 'tool') this.#card(item, updates);
    }
    if (this.#transcript.todos !== this.#todos) {
      this.#todos = this.#transcript.todos;
      updates.push(planUpdate(this.#todos ?? []));
    }
    return updates;
  }

  #answer(item: AssistantItem, event: AnySessionEvent, updates: SessionUpdate[]): void {
    let sent = this.#sentText.get(item);
    if (sent === undefined) {
      sent = [];
      this.#sentText.set(item, sent);
    }
    const chunk = event.type === 'assistant/chunk' ? (event.data as { chunk: StreamChunk }).chunk : undefined;
    if (chunk?.type === 'text-delta' || chunk?.type === 'reasoning-delta') {
      // The delta is exactly what the fold appended: send it as is. Slicing the grown text instead would
      // flatten it on every chunk (quadratic over a long answer).
      if (chunk.text === '') return;
      sent[chunk.index] = (sent[chunk.index] ?? 0) + chunk.text.length;
      updates.push({
        sessionUpdate: chunk.type === 'text-delta' ? 'agent_message_chunk' : 'agent_thought_chunk',
        content: { type: 'text', text: chunk.text },
      });
      return;
    }
    // Other events (the final message, a block's end) may carry text no delta showed: send the rest.
    item.blocks.forEach((block, index) => {
      if (block === undefined || (block.type !== 'text' && block.type !== 'reasoning')) return;
      const from = sent[index] ?? 0;
      if (block.text.length <= from) return;
      sent[index] = block.text.length;
      const text = block.text.slice(from);
      updates.push({
        sessionUpdate: block.type === 'text' ? 'agent_message_chunk' : 'agent_thought_chunk',
        content: { type: 'text', text },
      });
    });
    if (!item.streaming) this.#sentText.delete(item);
    if (item.usage !== undefined && !this.#reported.has(item)) {
      this.#reported.add(item);
      const usage = this.#usage();
      if (usage !== undefined) updates.push(usage);
    }
  }

  #usage(): SessionUpdate | undefined {
    if (this.#contextWindow === undefined) return undefined;
    const turns = this.#transcript.turns;
    const last = turns.at(-1)?.routes.at(-1)?.usage;
    if (last === undefined) return undefined;
    const used =
      last.inputTokens + (last.cacheReadTokens ?? 0) + (last.cacheWriteTokens ?? 0) + last.outputTokens;
    const cost = this.#transcript.cost(this.#context.pricing);
    return {
      sessionUpdate: 'usage_update',
      used,
      size: this.#contextWindow,
      ...(cost.unpricedResponses === 0 ? { cost: { amount: cost.usd, currency: 'USD' } } : {}),
    };
  }

  #card(card: ToolCard, updates: SessionUpdate[]): void {
    let presentation = this.#cards.get(card.callId);
    if (presentation === undefined) {
      if (card.result !== undefined) return;
      presentation = this.#present(card);
      this.#cards.set(card.callId, presentation);
      updates.push(toolCallUpdate(card, presentation, 'pending'));
      return;
    }
    if (card.result === undefined && card.state !== 'failed') return;
    this.#cards.delete(card.callId);
    updates.push({
      sessionUpdate: 'tool_call_update',
      toolCallId: card.callId,
      status: card.state === 'done' ? 'completed' : 'failed',
      content: resultContent(presentation, card.result?.text ?? '', card.result?.isError ?? true),
      ...(card.result?.meta !== undefined ? { rawOutput: card.result.meta } : {}),
    });
  }

  #present(card: ToolCard): ToolPresentation {
    return presentToolCall(this.#context.tool(card.name), card.name, card.arguments, this.#context.cwd);
  }
}

type ToolCallUpdate = ToolCall & { sessionUpdate: 'tool_call' };

function toolCallUpdate(
  card: ToolCard,
  presentation: ToolPresentation,
  status: ToolCallStatus,
): ToolCallUpdate {
  return {
    sessionUpdate: 'tool_call',
    toolCallId: card.callId,
    title: presentation.title,
    kind: presentation.kind,
    status,
    locations: presentation.locations,
    content: presentation.diffs,
    rawInput: presentation.rawInput,
  };
}

const replayStatus: Readonly<Record<ToolCard['state'], ToolCallStatus>> = {
  requested: 'pending',
  'awaiting-approval': 'pending',
  running: 'in_progress',
  done: 'completed',
  failed: 'failed',
};

/**
 * The history of a stored log as updates, read off the transcript fold: what people wrote, each answer
 * whole (reasoning, then text), each tool card in its final state with its result, failed turns as a
 * note, and the latest task list as a `plan`.
 */
export function replayUpdates(events: Iterable<AnySessionEvent>, context: UpdateContext): SessionUpdate[] {
  const transcript = Transcript.of(events, { views: defaultRecordViews });
  const updates: SessionUpdate[] = [];
  for (const item of transcript.items) updates.push(...replayItem(item, context));
  if (transcript.todos !== undefined) updates.push(planUpdate(transcript.todos));
  return updates;
}

function replayItem(item: TranscriptItem, context: UpdateContext): SessionUpdate[] {
  switch (item.kind) {
    case 'user':
      return userUpdates(item);
    case 'assistant': {
      const updates: SessionUpdate[] = [];
      for (const type of ['reasoning', 'text'] as const) {
        const text = item.blocks.map((block) => (block?.type === type ? block.text : '')).join('');
        if (text === '') continue;
        updates.push({
          sessionUpdate: type === 'text' ? 'agent_message_chunk' : 'agent_thought_chunk',
          content: { type: 'text', text },
        });
      }
      return updates;
    }
    case 'tool': {
      const presentation = presentToolCall(context.tool(item.name), item.name, item.arguments, context.cwd);
      const update = toolCallUpdate(item, presentation, replayStatus[item.state]);
      if (item.result === undefined && item.state !== 'failed') return [update];
      update.content = resultContent(presentation, item.result?.text ?? '', item.result?.isError ?? true);
      if (item.result?.meta !== undefined) update.rawOutput = item.result.meta;
      return [update];
    }
    case 'turn-end':
      if (item.reason.kind !== 'error') return [];
      return [
        {
          sessionUpdate: 'agent_message_chunk',
          content: {
            type: 'text',
            text: `\n\n[error ${item.reason.error.code}: ${item.reason.error.message}]\n\n`,
          },
        },
      ];
    default:
      return [];
  }
}

function userUpdates(item: UserItem): SessionUpdate[] {
  // Tool results and plugin context ride user-role messages; only what a person wrote is shown.
  if (item.source !== 'user' && item.source !== 'steer') return [];
  const updates: SessionUpdate[] = [];
  for (const block of item.message.content) {
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

/** The `plan` update of a task list snapshot. */
export function planUpdate(todos: NonNullable<TodoList>): SessionUpdate {
  return {
    sessionUpdate: 'plan',
    entries: todos.map((todo) => ({ content: todo.content, status: todo.status, priority: 'medium' })),
  };
}
