import type { HookBus } from '../hooks/index.ts';
import type { UserMessage } from '../llm/index.ts';
import { HarnessError, checkImageContent, snapshotJson } from '../llm/index.ts';
import type { AnySessionEvent, Session } from '../session/index.ts';
import type { Agent, InboxTarget } from './agent.ts';
import './agent-events.ts';

type SplicedData = {
  target: InboxTarget;
  start: number;
  removedCount?: number;
  inserted: UserMessage[];
  outcome?: 'canceled';
};

const spliceTypes: ReadonlySet<string> = new Set(['agent/inbox/spliced']);
// The name of the inbox's scan in a session's saved scan states (its state: both queues).
const inboxScan = 'inbox/1';
const inboxTargets: readonly InboxTarget[] = ['next-turn', 'next-step'];

/** Thrown for an invalid inbox mutation (bad bounds, a duplicate message id); nothing changes. */
export class InboxError extends HarnessError {
  constructor(message: string) {
    super('INVALID_INBOX_OPERATION', message);
    this.name = 'InboxError';
  }
}

/**
 * The agent's inbox: two ordered queues, every mutation recorded as a durable `agent/inbox/spliced`,
 * with `inserted` / `discarded` / `claimed` notifications; claiming is a pure deletion.
 */
export class Inbox {
  readonly #queues: Record<InboxTarget, UserMessage[]> = { 'next-turn': [], 'next-step': [] };
  readonly #session: Session;
  readonly #hooks: HookBus;
  #owner: Agent | undefined;

  constructor(options: { session: Session; hooks: HookBus }) {
    this.#session = options.session;
    this.#hooks = options.hooks;
    const session = options.session;
    const seedLength = session.header.seedLength ?? 0;
    // A snapshot's saved queues stand for the splices before its end: the replay starts there.
    const saved = session.scans.restored(inboxScan);
    const restored =
      saved !== undefined && saved.events >= seedLength ? restoredQueues(saved.state) : undefined;
    if (restored !== undefined) for (const target of inboxTargets) this.#queues[target] = restored[target];
    const from = restored !== undefined ? saved!.events : seedLength;
    const log = session.log;
    for (let seq = log.nextOfType(spliceTypes, from); seq >= 0; seq = log.nextOfType(spliceTypes, seq + 1))
      this.#replay(log.at(seq)!);
    session.scans.register(inboxScan, () => ({
      'next-turn': this.#queues['next-turn'],
      'next-step': this.#queues['next-step'],
    }));
  }

  /** Sets the agent named in notifications. */
  bindOwner(agent: Agent): void {
    this.#owner = agent;
  }

  /** The pending messages of a target, in order (a copy). */
  list(target: InboxTarget): UserMessage[] {
    return this.#queues[target].slice();
  }

  /** The number of pending messages of a target, or of both. */
  size(target?: InboxTarget): number {
    if (target !== undefined) return this.#queues[target].length;
    return this.#queues['next-turn'].length + this.#queues['next-step'].length;
  }

  /** Where a pending message waits, if it does. */
  find(id: string): { target: InboxTarget; index: number; message: UserMessage } | undefined {
    for (const target of ['next-turn', 'next-step'] as const) {
      const index = this.#queues[target].findIndex((message) => message.id === id);
      if (index >= 0) return { target, index, message: this.#queues[target][index]! };
    }
    return undefined;
  }

  /** Inserts at the tail. */
  append(target: InboxTarget, message: UserMessage): void {
    this.#splice(target, this.#queues[target].length, 0, [message], false);
  }

  /** Inserts at the head. */
  prepend(target: InboxTarget, message: UserMessage): void {
    this.#splice(target, 0, 0, [message], false);
  }

  /** General splice; removing anything is a cancellation (`outcome: 'canceled'`). Returns what it removed. */
  splice(
    target: InboxTarget,
    start: number,
    deleteCount: number,
    inserted: readonly UserMessage[] = [],
  ): UserMessage[] {
    return this.#splice(target, start, deleteCount, inserted, true);
  }

  /** Cancels one pending message; false when it is not pending. */
  remove(id: string): boolean {
    const found = this.find(id);
    if (found === undefined) return false;
    this.#splice(found.target, found.index, 1, [], true);
    return true;
  }

  /** Replaces a pending message in place (discarded old, inserted new); false when it is not pending. */
  replace(id: string, message: UserMessage): boolean {
    const found = this.find(id);
    if (found === undefined) return false;
    this.#splice(found.target, found.index, 1, [message], true);
    return true;
  }

  /** Moves a pending message to the head of a target (e.g. "send now" moves it to `next-step`). */
  move(id: string, target: InboxTarget): boolean {
    const found = this.find(id);
    if (found === undefined) return false;
    this.#splice(found.target, found.index, 1, [], false);
    this.#splice(target, 0, 0, [found.message], false);
    return true;
  }

  /** Cancels everything pending: `next-step` first, then `next-turn`. */
  clear(): void {
    for (const target of ['next-step', 'next-turn'] as const) {
      if (this.#queues[target].length > 0) this.#splice(target, 0, this.#queues[target].length, [], true);
    }
  }

  /**
   * Claims all `next-step` input plus, when `target` is `next-turn`, the first `next-turn` message, as
   * pure deletions (no outcome, no discarded notification); then `claimed` per message, in batch order.
   */
  claim(target: InboxTarget, turn: number): UserMessage[] {
    const batch: UserMessage[] = [];
    const steps = this.#queues['next-step'];
    if (steps.length > 0) batch.push(...this.#splice('next-step', 0, steps.length, [], false, true));
    if (target === 'next-turn' && this.#queues['next-turn'].length > 0) {
      batch.push(...this.#splice('next-turn', 0, 1, [], false, true));
    }
    const owner = this.#owner;
    if (owner !== undefined) {
      for (const message of batch)
        this.#hooks.emit('agent/inbox/claimed', { agent: owner, message, turn }, owner.id);
    }
    return batch;
  }

  #splice(
    target: InboxTarget,
    rawStart: number,
    rawDeleteCount: number,
    rawInserted: readonly UserMessage[],
    publicRemoval: boolean,
    claiming = false,
  ): UserMessage[] {
    const queue = this.#queues[target];
    const length = queue.length;
    let start = Number.isNaN(rawStart) ? 0 : Math.trunc(rawStart);
    if (start < 0) start = Math.max(0, length + start);
    start = Math.min(start, length);
    const deleteCount = Math.min(
      Math.max(0, Number.isNaN(rawDeleteCount) ? 0 : Math.trunc(rawDeleteCount)),
      length - start,
    );
    const inserted = rawInserted.map((message) => snapshotMessage(message));
    const removing = new Set(queue.slice(start, start + deleteCount).map((message) => message.id));
    const seen = new Set<string>();
    for (const message of inserted) {
      if (seen.has(message.id)) throw new InboxError(`message ${message.id} appears twice in one insertion`);
      seen.add(message.id);
      const pending = this.find(message.id);
      if (pending !== undefined && !(pending.target === target && removing.has(message.id))) {
        throw new InboxError(`message ${message.id} is already pending`);
      }
    }
    if (deleteCount === 0 && inserted.length === 0) return [];
    const data: SplicedData = { target, start, inserted };
    if (deleteCount > 0) data.removedCount = deleteCount;
    if (publicRemoval && deleteCount > 0 && !claiming) data.outcome = 'canceled';
    // Durable first: observers of session/event still see the pre-splice lists.
    this.#session.append('agent/inbox/spliced', data);
    const removed = queue.splice(start, deleteCount, ...inserted);
    const owner = this.#owner;
    if (owner !== undefined) {
      if (publicRemoval && !claiming) {
        for (const message of removed)
          this.#hooks.emit('agent/inbox/discarded', { agent: owner, target, message }, owner.id);
      }
      for (const message of inserted)
        this.#hooks.emit('agent/inbox/inserted', { agent: owner, target, message }, owner.id);
    }
    return removed;
  }

  #replay(event: AnySessionEvent): void {
    const data = event.data as SplicedData;
    const queue = this.#queues[data.target];
    if (queue === undefined || !Number.isInteger(data.start) || data.start < 0 || data.start > queue.length) {
      throw new InboxError(`invalid persisted inbox splice at seq ${event.seq}`);
    }
    const removedCount = data.removedCount ?? 0;
    if (data.start + removedCount > queue.length) {
      throw new InboxError(`invalid persisted inbox splice at seq ${event.seq}`);
    }
    queue.splice(data.start, removedCount, ...data.inserted);
  }
}

/** Saved queues as the inbox holds them (frozen copies), or undefined when the state does not fit. */
function restoredQueues(state: unknown): Record<InboxTarget, UserMessage[]> | undefined {
  if (typeof state !== 'object' || state === null) return undefined;
  const queues: Record<InboxTarget, UserMessage[]> = { 'next-turn': [], 'next-step': [] };
  const ids = new Set<string>();
  for (const target of inboxTargets) {
    const queue = (state as Partial<Record<InboxTarget, unknown>>)[target];
    if (!Array.isArray(queue)) return undefined;
    for (const message of queue as unknown[]) {
      const shape = message as Partial<UserMessage> | null;
      if (typeof shape !== 'object' || shape === null || shape.role !== 'user') return undefined;
      if (typeof shape.id !== 'string' || ids.has(shape.id)) return undefined;
      ids.add(shape.id);
      try {
        queues[target].push(snapshotJson(message as UserMessage));
      } catch {
        // Not lossless JSON: not a state the inbox saved, so the splices are replayed instead.
        return undefined;
      }
    }
  }
  return queues;
}

function snapshotMessage(message: UserMessage): UserMessage {
  if (message.role !== 'user') throw new InboxError('only user-role messages can be queued');
  // Checked before the durable splice: a bad or oversized image is refused with its code, nothing logged.
  if (Array.isArray(message.content)) checkImageContent(message.content);
  return snapshotJson(message);
}
