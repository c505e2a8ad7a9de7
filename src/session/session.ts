import type { EmitEvent, HookBus } from '../hooks/index.ts';
import { snapshotAt } from '../llm/index.ts';
import type { AdoptMode } from '../llm/index.ts';
import type { Message } from '../llm/index.ts';
import { EnclosureTracker } from './enclosure.ts';
import type {
  AnySessionEvent,
  SessionEvent,
  SessionEventMap,
  SessionEventType,
  SurfaceOp,
} from './session-event.ts';
import { surfaceEventTypes } from './session-event.ts';
import { SessionError, appendSnapshotError } from './session-error.ts';
import { SessionLog } from './session-log.ts';
import type { ReadonlySessionLog, SessionLogPrefix } from './session-log.ts';
import { Surface } from './surface.ts';
import { LogScanStates } from './log-scan-states.ts';
import type { SavedLogScan } from './log-scan-states.ts';
import { checkpointDone } from './session-persistence.ts';
import type { CheckpointReason, SessionPersistence } from './session-persistence.ts';

/** Facts about a session kept outside its log. */
export interface SessionHeader {
  version: 0;
  id: string;
  createdAt: number;
  cwd?: string;
  title?: string;
  parentSession?: string;
  parentCallId?: string;
  seedLength?: number;
  origin?: 'subagent' | 'fork' | 'resume';
  delegationDepth?: number;
}

/**
 * Where a resumed session starts without reading its past: a prefix of its log read on demand, ending
 * where no turn is open, with the surface and the last turn number after it.
 */
export interface SessionResumePoint {
  prefix: SessionLogPrefix;
  surface: { nodes: readonly number[]; generation: number };
  lastTurn: number;
  /** What the log's scans had derived after the prefix, by scan name (see `Session.scans`). */
  scans?: Readonly<Record<string, SavedLogScan>>;
}

/** Options of one append. */
export interface AppendOptions {
  surfaceOp?: SurfaceOp;
  sourceEventSeqs?: readonly number[];
  ignorable?: true;
  /**
   * The caller hands `data` (and `sourceEventSeqs`) over: their top-level object is validated and frozen
   * in place instead of copied, nested values are still snapshotted. The caller must not keep them.
   */
  adopt?: true;
}

/** Payload of `session/event`: one committed durable event. */
export interface SessionEventPayload {
  readonly session: Session;
  readonly event: AnySessionEvent;
}

declare module '../hooks/hook-event-map.ts' {
  interface HookEventMap {
    'session/event': EmitEvent<SessionEventPayload>;
  }
}

// What `appendBuilt` tells the one append it makes, read (and reset) first thing by that append, so an
// append made by an observer during publication never sees it: `notBuilt`, or built data whose packed
// kind is that number (-1 when the caller does not know it).
const notBuilt = -2;
let builtAppend = notBuilt;
const noOptions: AppendOptions = Object.freeze({});

/**
 * `session.append` for data a typed constructor of the loop built (see built-event-data.ts): a frozen
 * plain object whose members are lossless JSON and whose nested objects are frozen snapshots. That data
 * is committed as it is, without the snapshot's walk; everything else (enclosure and surface checks,
 * packing, persistence, publication) is `append`'s. Data that is not frozen is snapshotted as usual. A
 * frozen `sourceEventSeqs` (the loop's own seqs) is kept as it is too; the surface check validates it.
 * `packedKind`, when not -1, is the kind `packedKindOf` gives the committed event (the caller built its
 * data and knows; see `literalChunkKind`), so the log does not judge it again.
 * Internal: plugin and user data always goes through `append`.
 */
export function appendBuilt<Type extends SessionEventType>(
  session: Session,
  type: Type,
  data: SessionEventMap[Type],
  options: AppendOptions = noOptions,
  packedKind = -1,
): SessionEvent<Type> {
  builtAppend = packedKind;
  try {
    return session.append(type, data, options);
  } finally {
    builtAppend = notBuilt;
  }
}

/** The dispatch modes of the `session/*` events. */
export const sessionEventModes = { 'session/event': 'emit' } as const;

/**
 * The append-only session log: validates, snapshots and freezes each event, keeps `seq` contiguous,
 * maintains the model-visible surface, and publishes every commit on `session/event` in seq order.
 */
export class Session {
  readonly id: string;
  readonly header: Readonly<SessionHeader>;
  readonly #log: SessionLog;
  // Committed events not yet published, as the objects that were committed.
  readonly #unpublished: AnySessionEvent[] = [];
  readonly #surface: Surface;
  readonly #enclosure = new EnclosureTracker();
  readonly #hooks: HookBus | undefined;
  #persistence: SessionPersistence | undefined;
  #firstLiveSeq = 0;
  #deferredEvents = 0;
  /** The log scans' states: restored from the resume point, saved with the store's next snapshot. */
  readonly scans: LogScanStates;
  #publishing = false;
  #closed = false;

  constructor(options: {
    header: SessionHeader;
    hooks?: HookBus;
    seed?: readonly AnySessionEvent[];
    /** The seed's events are handed over (freshly parsed): validated and frozen in place, not copied. */
    seedOwned?: boolean;
    persistence?: SessionPersistence;
    /** The log starts after this point's prefix; `seed` holds only the events that follow it. */
    resumeFrom?: SessionResumePoint;
  }) {
    this.header = Object.freeze({ ...options.header });
    this.id = options.header.id;
    this.#hooks = options.hooks;
    const resume = options.resumeFrom;
    this.#log = new SessionLog(resume?.prefix);
    this.#surface = new Surface(this.#log);
    if (resume !== undefined) {
      this.#surface.restore(resume.surface.nodes, resume.surface.generation);
      this.#enclosure.lastTurn = resume.lastTurn;
      this.#deferredEvents = resume.prefix.length;
    }
    this.scans = new LogScanStates(resume?.scans, resume?.prefix.length ?? 0);
    const seed = options.seed;
    if (seed !== undefined) {
      const adopt: AdoptMode = options.seedOwned === true ? 'deep' : 'none';
      for (const event of seed) this.#acceptSeed(event, adopt);
      this.#firstLiveSeq = this.#log.length;
    }
    this.#persistence = options.persistence;
    const length = this.#log.length;
    if (seed !== undefined && length > 0 && this.#log.typeAt(length - 1) !== 'session/end-seed') {
      this.append('session/end-seed', {});
    }
  }

  /**
   * Every event in seq order, as a fresh array built from the log (O(n): code that reads the log as
   * it grows uses `log`). Packed events (chunks, boundaries) are rebuilt: equal and frozen, not identical.
   */
  get events(): readonly AnySessionEvent[] {
    return this.#log.slice();
  }

  /** The log itself: indexed and typed reads without copying. */
  get log(): ReadonlySessionLog {
    return this.#log;
  }

  /** The number of events. */
  get length(): number {
    return this.#log.length;
  }

  /**
   * How many leading events the store did not read when it opened this session (a resume from a
   * snapshot): they are read from the store on first access. 0 when the whole log was read.
   */
  get deferredEvents(): number {
    return this.#deferredEvents;
  }

  /** The seq of the first event appended by this live session (the seed length). */
  get firstLiveSeq(): number {
    return this.#firstLiveSeq;
  }

  /** The surface replacement generation: it changes when history is rewritten, not extended. */
  get replaceGeneration(): number {
    return this.#surface.replaceGeneration;
  }

  /** The seqs currently visible to the model. */
  get surfaceNodes(): readonly number[] {
    return this.#surface.nodes;
  }

  /** The turn number of the last `turn/start`, 0 when none. */
  get lastTurn(): number {
    return this.#enclosure.lastTurn;
  }

  /** The open turn, if any. */
  get openTurn(): number | undefined {
    return this.#enclosure.openTurn;
  }

  /** The open step, if any. */
  get openStep(): number | undefined {
    return this.#enclosure.openStep;
  }

  /** The calls logged in the open step that still await a result (callId → tool/call seq). */
  get pendingCalls(): ReadonlyMap<string, number> {
    return this.#enclosure.pendingCalls;
  }

  /** True once the session was closed; appends then throw. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The model history: a fresh array of the frozen messages on the surface. */
  deriveMessages(): Message[] {
    return this.#surface.deriveMessages();
  }

  /** The model history as a shared frozen array, reused until the surface changes. */
  derivedMessages(): readonly Message[] {
    return this.#surface.derivedView();
  }

  /** Attaches the sink that makes appends durable. */
  attachPersistence(persistence: SessionPersistence | undefined): void {
    this.#persistence = persistence;
  }

  /** True when appends go to a persistence sink, so that `checkpoint` has work to do. */
  get persistent(): boolean {
    return this.#persistence !== undefined;
  }

  /** Makes every committed event durable (a no-op without persistence); rejects on failure. */
  checkpoint(reason: CheckpointReason, signal?: AbortSignal): Promise<void> {
    const persistence = this.#persistence;
    // Without persistence there is nothing to wait for: a settled promise, not an async round trip.
    if (persistence === undefined) return checkpointDone;
    // One rejection handler rather than an async wrapper: the loop checkpoints twice per step.
    let pending: Promise<void>;
    try {
      pending = persistence.checkpoint(reason, signal);
    } catch (error) {
      return Promise.reject(this.#checkpointFailed(error));
    }
    if (pending === checkpointDone) return checkpointDone;
    return pending.catch((error: unknown) => {
      throw this.#checkpointFailed(error);
    });
  }

  /** The persistence's failure as `CHECKPOINT_FAILED` once known: every later checkpoint fails with it. */
  get checkpointFailure(): SessionError | undefined {
    const failure = this.#persistence?.failure;
    return failure === undefined ? undefined : this.#checkpointFailed(failure);
  }

  #checkpointFailed(cause: unknown): SessionError {
    return new SessionError('CHECKPOINT_FAILED', `session ${this.id}: could not make the log durable`, {
      cause,
    });
  }

  /** Closes the session for writing. */
  close(): void {
    this.#closed = true;
  }

  /**
   * Appends one event: snapshots `data` as lossless JSON, validates enclosure and surface rules, commits,
   * then publishes. An append made from inside a `session/event` observer commits at once and is
   * published after the current event reached every observer. Throws SessionError; nothing is appended.
   */
  append<Type extends SessionEventType>(
    type: Type,
    data: SessionEventMap[Type],
    options: AppendOptions = {},
  ): SessionEvent<Type> {
    const built = builtAppend;
    builtAppend = notBuilt;
    if (this.#closed) throw new SessionError('SESSION_CLOSED', `session ${this.id} is closed`);
    const event = this.#build(type, data, options, this.#log.length, Date.now(), 'none', built !== notBuilt);
    // Commit and publication are written out here rather than called: one body past V8's inlining size
    // limit, so the loop's many call sites share one compiled append instead of each inlining its own
    // copy of the path (which multiplied the optimizing compiler's work per step). As in #commit:
    // events without surface metadata and of no surface type skip the surface.
    const onSurface =
      event.surfaceOp !== undefined ||
      event.sourceEventSeqs !== undefined ||
      surfaceEventTypes.has(event.type);
    this.#enclosure.check(event);
    if (onSurface) this.#surface.check(event);
    const bare = !onSurface && event.ignorable === undefined;
    const packedKind = this.#log.push(event, bare, bare && built >= 0 ? built : -1);
    this.#enclosure.apply(event);
    if (onSurface) this.#surface.apply(event);
    // Then written, then published: a persistence sink sees every commit before any observer reacts.
    this.#persistence?.write(event, packedKind);
    const queue = this.#unpublished;
    // An append made by an observer while an outer publication runs waits for the outer loop.
    if (this.#publishing) {
      queue.push(event);
      return event as SessionEvent<Type>;
    }
    const hooks = this.#hooks;
    if (hooks === undefined) return event as SessionEvent<Type>;
    this.#publishing = true;
    try {
      // Events left queued by a publication that threw go out first, in seq order.
      if (queue.length > 0) queue.push(event);
      else this.#emit(hooks, event);
      while (queue.length > 0) this.#emit(hooks, queue.shift()!);
    } finally {
      this.#publishing = false;
    }
    return event as SessionEvent<Type>;
  }

  /** The typed events of one type, in seq order (a scan: for tests and tools, not hot paths). */
  eventsOfType<Type extends SessionEventType>(type: Type): SessionEvent<Type>[] {
    const log = this.#log;
    const found: SessionEvent<Type>[] = [];
    for (let seq = 0; seq < log.length; seq++)
      if (log.typeAt(seq) === type) found.push(log.at(seq) as SessionEvent<Type>);
    return found;
  }

  #build(
    type: string,
    data: unknown,
    options: AppendOptions,
    seq: number,
    time: number,
    adoptMode: AdoptMode = 'none',
    built = false,
  ): AnySessionEvent {
    if (typeof type !== 'string' || type === '')
      throw new SessionError('INVALID_EVENT', 'event type is required');
    let frozenData: unknown;
    let sources: readonly number[] | undefined;
    let surfaceOp: SurfaceOp | undefined;
    try {
      // Event parts are not remembered for sharing: events are never embedded in later snapshots.
      const adopt = options.adopt === true ? 'root' : adoptMode;
      frozenData = built && Object.isFrozen(data) ? data : snapshotAt(data, type, '.data', adopt);
      const sourceSeqs = options.sourceEventSeqs;
      // The loop's own frozen source lists are its seqs, which the surface check validates one by one.
      if (sourceSeqs !== undefined)
        sources =
          built && Object.isFrozen(sourceSeqs)
            ? sourceSeqs
            : snapshotAt(sourceSeqs, type, '.sourceEventSeqs', adopt);
      if (options.surfaceOp !== undefined)
        surfaceOp = snapshotAt(options.surfaceOp, type, '.surfaceOp', adopt);
    } catch (error) {
      throw appendSnapshotError(error);
    }
    if (options.ignorable === true || (surfaceOp === undefined && sources !== undefined)) {
      const event: {
        type: string;
        seq: number;
        time: number;
        data: unknown;
        ignorable?: true;
        surfaceOp?: SurfaceOp;
        sourceEventSeqs?: readonly number[];
      } = { type, seq, time, data: frozenData };
      if (options.ignorable === true) event.ignorable = true;
      if (surfaceOp !== undefined) event.surfaceOp = surfaceOp;
      if (sources !== undefined) event.sourceEventSeqs = sources;
      return Object.freeze(event);
    }
    // The common shapes as whole literals: members added later would live in a separate property array.
    if (surfaceOp === undefined) return Object.freeze({ type, seq, time, data: frozenData });
    if (sources === undefined) return Object.freeze({ type, seq, time, data: frozenData, surfaceOp });
    return Object.freeze({ type, seq, time, data: frozenData, surfaceOp, sourceEventSeqs: sources });
  }

  // The seed's commit. `append` writes the same steps out in its own body (see there): keep them alike.
  #commit(event: AnySessionEvent): void {
    // Most events (chunks, boundaries) carry no surface metadata and are no surface type: the surface
    // has nothing to check or apply for them, and skipping it keeps the per-chunk path short.
    const onSurface =
      event.surfaceOp !== undefined ||
      event.sourceEventSeqs !== undefined ||
      surfaceEventTypes.has(event.type);
    this.#enclosure.check(event);
    if (onSurface) this.#surface.check(event);
    // #build gives an event without flags or surface metadata exactly type, seq, time and data.
    this.#log.push(event, !onSurface && event.ignorable === undefined);
    this.#enclosure.apply(event);
    if (onSurface) this.#surface.apply(event);
  }

  #acceptSeed(event: AnySessionEvent, adopt: AdoptMode): void {
    if (event.seq !== this.#log.length) {
      throw new SessionError(
        'INVALID_EVENT',
        `seed event has seq ${event.seq}, expected ${this.#log.length}`,
      );
    }
    const options: AppendOptions = {};
    if (event.surfaceOp !== undefined) options.surfaceOp = event.surfaceOp;
    if (event.sourceEventSeqs !== undefined) options.sourceEventSeqs = event.sourceEventSeqs;
    if (event.ignorable === true) options.ignorable = true;
    this.#commit(this.#build(event.type, event.data, options, event.seq, event.time, adopt));
  }

  #emit(hooks: HookBus, event: AnySessionEvent): void {
    // No payload is built for an event nobody hears.
    if (hooks.hears('session/event', this.id)) hooks.emit('session/event', { session: this, event }, this.id);
  }
}
