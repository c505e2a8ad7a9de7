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
  const log = session.log;
  const found = session.events.find(predicate);
  if (found !== undefined) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    let seen = log.length;
    const timer = setInterval(() => {
      for (; seen < log.length; seen++) {
        const event = log.at(seen)!;
        if (predicate(event)) {
          clearInterval(timer);
          clearTimeout(timeout);
          resolve(event);
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
