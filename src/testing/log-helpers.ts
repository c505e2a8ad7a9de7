import type { AnySessionEvent, Session } from '../session/index.ts';

/** The ordered event types of a log, optionally without chunk noise. */
export function eventTypes(
  log: Session | readonly AnySessionEvent[],
  options: { chunks?: boolean } = {},
): string[] {
  const events = 'events' in log ? log.events : log;
  return events
    .filter((event) => options.chunks !== false || event.type !== 'assistant/chunk')
    .map((event) => event.type);
}

/** The events of a log without `assistant/chunk` and with `seq`/`time` dropped, for exact comparisons. */
export function eventSummary(log: Session | readonly AnySessionEvent[]): { type: string; data: unknown }[] {
  const events = 'events' in log ? log.events : log;
  return events
    .filter((event) => event.type !== 'assistant/chunk')
    .map((event) => ({ type: event.type, data: event.data }));
}

/** The data of every event of one type. */
export function eventsOf<T = unknown>(log: Session | readonly AnySessionEvent[], type: string): T[] {
  const events = 'events' in log ? log.events : log;
  return events.filter((event) => event.type === type).map((event) => event.data as T);
}

/** Waits until a predicate over the log holds, polling on every append (rejects after `timeoutMs`). */
export function waitForEvent(
  session: Session,
  predicate: (event: AnySessionEvent) => boolean,
  timeoutMs = 5_000,
): Promise<AnySessionEvent> {
  const found = session.events.find(predicate);
  if (found !== undefined) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    let seen = session.events.length;
    const timer = setInterval(() => {
      const events = session.events;
      for (; seen < events.length; seen++) {
        if (predicate(events[seen]!)) {
          clearInterval(timer);
          clearTimeout(timeout);
          resolve(events[seen]!);
          return;
        }
      }
    }, 1);
    const timeout = setTimeout(() => {
      clearInterval(timer);
      reject(new Error(`no matching event within ${timeoutMs} ms`));
    }, timeoutMs);
  });
}
