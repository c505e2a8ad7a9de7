import type {
  DispatchMode,
  EventNamesOfMode,
  HookEventName,
  ListenerOf,
  PayloadOf,
  ResultOf,
} from './hook-event-map.ts';

/** Removes a registration; calling it more than once does nothing. */
export type Disposer = () => void;

/** A scope key: registrations made with one hear only dispatches made with the same key. */
export type HookScope = object | string;

/** Options for one registration. */
export interface ListenOptions {
  /** Hear only dispatches made in this scope; the registration is unwound with `disposeScope(scope)`. */
  scope?: HookScope;
}

/** Receives a listener failure that the bus contained (emit mode) so it can be reported. */
export type ListenerErrorReporter = (event: string, error: unknown, scope: HookScope | undefined) => void;

interface Registration {
  readonly listener: (...args: never[]) => unknown;
  readonly scope: HookScope | undefined;
  active: boolean;
}

/** Thrown when an event is dispatched with a mode other than the one it was declared with. */
export class HookModeError extends Error {
  readonly code = 'HOOK_MODE_MISMATCH';
  constructor(event: string, declared: DispatchMode, used: DispatchMode) {
    super(`hook event '${event}' is declared '${declared}' but was dispatched as '${used}'`);
    this.name = 'HookModeError';
  }
}

/** The typed hook bus: emit, serial and waterfall dispatch over scoped, disposable registrations. */
export class HookBus {
  readonly #modes = new Map<string, DispatchMode>();
  // Copy-on-write listener arrays: a dispatch iterates a snapshot that registration never mutates.
  readonly #listeners = new Map<string, readonly Registration[]>();
  readonly #scoped = new Map<HookScope, Set<Registration & { event: string }>>();
  #reportError: ListenerErrorReporter;

  constructor(options: { reportError?: ListenerErrorReporter } = {}) {
    this.#reportError =
      options.reportError ??
      ((event, error) => {
        console.error(`[rein] listener for '${event}' threw:`, error);
      });
  }

  /** Declares the dispatch mode of each event; a conflicting redeclaration throws. */
  declare(modes: Readonly<Record<string, DispatchMode>>): void {
    for (const [event, mode] of Object.entries(modes)) {
      const existing = this.#modes.get(event);
      if (existing !== undefined && existing !== mode) {
        throw new HookModeError(event, existing, mode);
      }
      this.#modes.set(event, mode);
    }
  }

  /** The declared mode of an event, if any. */
  modeOf(event: string): DispatchMode | undefined {
    return this.#modes.get(event);
  }

  /** Replaces the reporter that receives contained listener failures. */
  setErrorReporter(reporter: ListenerErrorReporter): void {
    this.#reportError = reporter;
  }

  /** Registers a listener and returns its disposer. */
  on<Name extends HookEventName>(
    event: Name,
    listener: ListenerOf<Name>,
    options: ListenOptions = {},
  ): Disposer {
    const registration: Registration & { event: string } = {
      listener: listener as (...args: never[]) => unknown,
      scope: options.scope,
      active: true,
      event,
    };
    this.#listeners.set(event, [...(this.#listeners.get(event) ?? []), registration]);
    if (options.scope !== undefined) {
      let set = this.#scoped.get(options.scope);
      if (set === undefined) {
        set = new Set();
        this.#scoped.set(options.scope, set);
      }
      set.add(registration);
    }
    return () => this.#remove(registration);
  }

  /** Removes every registration made with this scope. */
  disposeScope(scope: HookScope): void {
    const set = this.#scoped.get(scope);
    if (set === undefined) return;
    this.#scoped.delete(scope);
    for (const registration of set) this.#remove(registration);
  }

  /** True when at least one listener would hear this event in this scope. */
  has(event: HookEventName, scope?: HookScope): boolean {
    const list = this.#listeners.get(event);
    if (list === undefined) return false;
    return list.some((r) => r.scope === undefined || r.scope === scope);
  }

  /** Fire-and-forget dispatch: every listener runs; throws and rejections are contained and reported. */
  emit<Name extends EventNamesOfMode<'emit'>>(
    event: Name,
    payload: PayloadOf<Name>,
    scope?: HookScope,
  ): void {
    this.#checkMode(event, 'emit');
    const list = this.#listeners.get(event);
    if (list === undefined) return;
    for (const registration of list) {
      if (!registration.active || (registration.scope !== undefined && registration.scope !== scope))
        continue;
      try {
        const result = (registration.listener as (p: unknown) => unknown)(payload);
        if (result instanceof Promise) {
          result.catch((error: unknown) => this.#reportError(event, error, scope));
        }
      } catch (error) {
        this.#reportError(event, error, scope);
      }
    }
  }

  /** Serial dispatch: listeners are awaited in registration order; the first throw rejects the dispatch. */
  async serial<Name extends EventNamesOfMode<'serial'>>(
    event: Name,
    payload: PayloadOf<Name>,
    scope?: HookScope,
  ): Promise<void> {
    this.#checkMode(event, 'serial');
    const list = this.#listeners.get(event);
    if (list === undefined) return;
    for (const registration of list) {
      if (!registration.active || (registration.scope !== undefined && registration.scope !== scope))
        continue;
      await (registration.listener as (p: unknown) => unknown)(payload);
    }
  }

  /**
   * Waterfall dispatch: the first-registered listener is outermost; `next()` delegates inward and finally
   * to `inner`; a listener that returns without calling `next()` short-circuits. Throws propagate.
   */
  waterfall<Name extends EventNamesOfMode<'waterfall'>>(
    event: Name,
    payload: PayloadOf<Name>,
    inner: () => ResultOf<Name> | Promise<ResultOf<Name>>,
    scope?: HookScope,
  ): Promise<ResultOf<Name>> {
    this.#checkMode(event, 'waterfall');
    const all = this.#listeners.get(event);
    // Without a listener that hears this scope the inner step runs at once: no chain, no extra tick.
    if (all === undefined || !hears(all, scope)) return settle(inner);
    const chain = all.filter((r) => r.scope === undefined || r.scope === scope);
    const step = (index: number): Promise<ResultOf<Name>> => {
      const registration = chain[index];
      if (registration === undefined) return settle(inner);
      if (!registration.active) return step(index + 1);
      // `next` is memoized so a listener that calls it twice never runs the inner chain twice.
      let downstream: Promise<ResultOf<Name>> | undefined;
      const next = (): Promise<ResultOf<Name>> => (downstream ??= step(index + 1));
      try {
        return Promise.resolve(
          (registration.listener as (p: unknown, n: () => Promise<unknown>) => unknown)(payload, next),
        ) as Promise<ResultOf<Name>>;
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    };
    return step(0);
  }

  /** True when some active registration of `event` hears dispatches in `scope` (a cheap pre-check). */
  hears(event: HookEventName, scope?: HookScope): boolean {
    const list = this.#listeners.get(event);
    return list !== undefined && hears(list, scope);
  }

  #remove(registration: Registration & { event: string }): void {
    if (!registration.active) return;
    registration.active = false;
    const list = this.#listeners.get(registration.event);
    if (list !== undefined) {
      this.#listeners.set(
        registration.event,
        list.filter((r) => r !== registration),
      );
    }
    if (registration.scope !== undefined) this.#scoped.get(registration.scope)?.delete(registration);
  }

  #checkMode(event: string, used: DispatchMode): void {
    const declared = this.#modes.get(event);
    if (declared !== undefined && declared !== used) throw new HookModeError(event, declared, used);
  }
}

function hears(list: readonly Registration[], scope: HookScope | undefined): boolean {
  for (const registration of list) {
    if (registration.active && (registration.scope === undefined || registration.scope === scope))
      return true;
  }
  return false;
}

// Runs a waterfall's inner step now; a synchronous throw becomes a rejection with the thrown value.
function settle<Result>(inner: () => Result | Promise<Result>): Promise<Result> {
  try {
    return Promise.resolve(inner());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}
