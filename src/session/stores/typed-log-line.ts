import type { AnySessionEvent } from '../session-event.ts';
import { isShape } from './compact-log-state.ts';

/**
 * The event of a line in the generic form `[type, dt, data, extras?]`, given its seq and time: such a
 * line needs nothing from the lines before it. A string says why the line is not a valid record.
 */
export function expandTypedLine(
  line: readonly unknown[],
  seq: number,
  time: number,
): AnySessionEvent | string {
  const type = line[0];
  if (typeof type !== 'string' || type === '') return 'the record has no event type';
  if (line.length < 3) return 'the record has no data';
  if (line.length > 4) return 'the record has extra members';
  const event: Record<string, unknown> = { type, seq, time, data: line[2] };
  if (line.length === 4) {
    const extras = line[3];
    if (!isShape(extras)) return 'the record extras are not an object';
    for (const key of Object.keys(extras))
      if (key !== 'i' && key !== 'o' && key !== 's') return `unknown extra '${key}'`;
    if ('i' in extras) {
      if (extras.i !== 1) return 'ignorable must be 1 when present';
      event.ignorable = true;
    }
    if ('o' in extras) event.surfaceOp = extras.o;
    if ('s' in extras) event.sourceEventSeqs = extras.s;
  }
  return event as unknown as AnySessionEvent;
}
