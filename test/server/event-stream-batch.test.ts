import { afterEach, describe, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import type { ServerFixture } from './support.ts';
import { openStream, serverFixture } from './support.ts';

// `batch=1` (what the Web UI asks for): runs of durable events arrive as one `log-batch` message each.
describe('session event stream in batches', () => {
  let f: ServerFixture;
  afterEach(async () => {
    await f.close();
  });

  it('sends every durable event once, in seq order, with the id of each run its last seq; resumes after it', async () => {
    f = await serverFixture([
      { text: Array.from({ length: 40 }, (_, index) => `w${index} `) },
      { text: 'two' },
    ]);
    const { id } = (await f.api('POST', '/api/sessions', {})).json as { id: string };
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'first' });
    const agent = f.harness.agents.get(id)!;
    await agent.whenIdle();
    const stream = await openStream(
      f.server.port,
      `/api/sessions/${id}/stream?token=${f.server.token}&batch=1`,
    );
    const last = agent.session.length - 1;
    await stream.waitFor((frame) => frame.event === 'log-batch' && Number(frame.id) === last);
    const batches = stream.frames.filter((frame) => frame.event === 'log-batch');
    expect(stream.frames.some((frame) => frame.event === 'log')).toBe(false);
    expect(batches.flatMap((frame) => frame.data as AnySessionEvent[])).toEqual(agent.session.events);
    for (const frame of batches) expect(Number(frame.id)).toBe((frame.data as AnySessionEvent[]).at(-1)!.seq);
    // The live state follows the replay, as without batches.
    expect(stream.frames.some((frame) => frame.event === 'hello')).toBe(true);

    // Live events keep coming in runs, after what was sent, with no gap and no repeat.
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'second' });
    await agent.whenIdle();
    const end = agent.session.length - 1;
    await stream.waitFor((frame) => frame.event === 'log-batch' && Number(frame.id) === end);
    const seqs = stream.frames
      .filter((frame) => frame.event === 'log-batch')
      .flatMap((frame) => (frame.data as AnySessionEvent[]).map((event) => event.seq));
    expect(seqs).toEqual(agent.session.events.map((event) => event.seq));
    stream.close();

    const resumed = await openStream(
      f.server.port,
      `/api/sessions/${id}/stream?token=${f.server.token}&batch=1`,
      { 'last-event-id': String(last) },
    );
    await resumed.waitFor((frame) => frame.event === 'log-batch' && Number(frame.id) === end);
    expect(
      resumed.frames
        .filter((frame) => frame.event === 'log-batch')
        .flatMap((frame) => frame.data as AnySessionEvent[]),
    ).toEqual(agent.session.events.slice(last + 1));
    resumed.close();
  });
});
