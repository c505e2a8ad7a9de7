/** The open map of every hook event: modules add their events by declaration merging on this interface. */
export interface HookEventMap {}

/** How an event is dispatched: fire-and-forget, awaited one by one, or around-middleware with `next()`. */
export type DispatchMode = 'emit' | 'serial' | 'waterfall';

/** Declares an emit event: every listener runs in registration order, throws are contained and reported. */
export interface EmitEvent<Payload> {
  mode: 'emit';
  payload: Payload;
}

/** Declares a serial event: listeners are awaited one after another; a throw fails the dispatch. */
export interface SerialEvent<Payload> {
  mode: 'serial';
  payload: Payload;
}

/** Declares a waterfall event: listeners wrap `next()`, the first registered is outermost. */
export interface WaterfallEvent<Payload, Result> {
  mode: 'waterfall';
  payload: Payload;
  result: Result;
}

/** Any event name in the map. */
export type HookEventName = keyof HookEventMap & string;

type ModeOf<Name extends HookEventName> = HookEventMap[Name] extends { mode: infer M } ? M : never;

/** The names of events declared with the given mode. */
export type EventNamesOfMode<Mode extends DispatchMode> = {
  [Name in HookEventName]: ModeOf<Name> extends Mode ? Name : never;
}[HookEventName];

/** The payload type an event carries. */
export type PayloadOf<Name extends HookEventName> = HookEventMap[Name] extends { payload: infer P }
  ? P
  : never;

/** The result type a waterfall event resolves to. */
export type ResultOf<Name extends HookEventName> = HookEventMap[Name] extends { result: infer R } ? R : never;

/** The listener signature for an event, derived from its declared mode. */
export type ListenerOf<Name extends HookEventName> =
  HookEventMap[Name] extends WaterfallEvent<infer P, infer R>
    ? (payload: P, next: () => Promise<R>) => R | Promise<R>
    : HookEventMap[Name] extends { payload: infer P }
      ? (payload: P) => void | Promise<void>
      : never;
