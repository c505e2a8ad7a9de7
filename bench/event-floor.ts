// `npx tsx bench/event-floor.ts`: what keeping one frozen object per stream delta costs by itself, the
// floor under any in-memory log of every chunk. A bare loop builds a chunk, wraps it as Rein's
// `assistant/chunk` data would be wrapped, freezes an event with a seq and a timestamp, keeps it and hands
// it to one subscriber: no validation, no hooks, no async iteration. Reports µs per event and the bytes
// retained per event after a full GC (run with `node --expose-gc --import tsx`).
const count = Number(process.argv.find((arg) => arg.startsWith('--events='))?.slice(9) ?? 100_000);
const collect = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

interface FloorEvent {
  readonly type: string;
  readonly seq: number;
  readonly time: number;
  readonly data: unknown;
}

function run(keep: boolean): { microseconds: number; bytes: number } {
  const events: FloorEvent[] = [];
  let seen = 0;
  const subscriber = (event: FloorEvent): void => {
    if (event.type === 'assistant/chunk') seen++;
  };
  collect();
  const before = process.memoryUsage().heapUsed;
  const start = performance.now();
  for (let index = 0; index < count; index++) {
    const chunk = Object.freeze({ type: 'text-delta', index: 0, text: 'abcdefgh' });
    const data = Object.freeze({ turn: 1, step: 1, chunk });
    const event = Object.freeze({ type: 'assistant/chunk', seq: index, time: Date.now(), data });
    if (keep || events.length === 0) events.push(event);
    subscriber(event);
  }
  const microseconds = ((performance.now() - start) * 1000) / count;
  collect();
  const bytes = (process.memoryUsage().heapUsed - before) / count;
  if (seen !== count || events.length === 0) throw new Error('the subscriber missed events');
  return { microseconds, bytes };
}

for (let round = 0; round < 3; round++) {
  const kept = run(true);
  const dropped = run(false);
  process.stdout.write(
    `kept: ${kept.microseconds.toFixed(2)} µs/event, ${kept.bytes.toFixed(0)} bytes retained/event;  ` +
      `not kept: ${dropped.microseconds.toFixed(2)} µs/event\n`,
  );
}
