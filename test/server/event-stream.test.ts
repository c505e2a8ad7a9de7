import { afterEach, describe, expect, it } from 'vitest';
import type { AnySessionEvent, ApprovalRequest } from '../../src/index.ts';
import type { ServerFixture, SseFrame } from './support.ts';
import { openStream, serverFixture, typesOf } from './support.ts';
import { approvedToolTurnTypes } from '../support/event-sequences.ts';

const script = [
  {
    text: ['Let me ', 'read the README.'],
    toolCalls: [{ id: 'call_read', name: 'read_file', arguments: { path: 'README.md' } }],
    usage: { inputTokens: 120, outputTokens: 20 },
  },
  { text: ['The README ', 'describes Rein.'], usage: { inputTokens: 180, outputTokens: 12 } },
];

function logFrames(frames: readonly SseFrame[]): AnySessionEvent[] {
  return frames.filter((frame) => frame.event === 'log').map((frame) => frame.data as AnySessionEvent);
}

describe('session event stream', () => {
  let f: ServerFixture;
  afterEach(async () => {
    await f.close();
  });

  it('replays, then streams live: the running example over HTTP, approval answered through the API', async () => {
    f = await serverFixture(script);
    const { id } = (await f.api('POST', '/api/sessions', {})).json as { id: string };
    const stream = await openStream(f.server.port, `/api/sessions/${id}/stream?token=${f.server.token}`);
    expect(stream.status).toBe(200);
    const hello = await stream.waitFor((frame) => frame.event === 'hello');
    expect(hello.data).toMatchObject({ sessionId: id, live: true, status: 'idle', approvals: [] });

    const sent = await f.api('POST', `/api/sessions/${id}/messages`, {
      text: 'Summarize the README',
      mode: 'followup',
    });
    expect(sent.status).toBe(202);
    const asked = await stream.waitFor(
      (frame) => frame.event === 'approvals' && (frame.data as { approvals: unknown[] }).approvals.length > 0,
    );
    const [request] = (asked.data as { approvals: ApprovalRequest[] }).approvals;
    expect(request).toMatchObject({
      name: 'read_file',
      callId: 'call_read',
      reason: 'reading needs approval',
    });
    expect((await f.api('GET', `/api/sessions/${id}/approvals`)).json).toEqual({ approvals: [request] });
    const answered = await f.api('POST', `/api/sessions/${id}/approvals/${request!.requestId}`, {
      decision: 'allow-once',
    });
    expect(answered.status).toBe(200);
    const again = await f.api('POST', `/api/sessions/${id}/approvals/${request!.requestId}`, {
      decision: 'allow-once',
    });
    expect(again.status).toBe(404);

    await stream.waitFor(
      (frame) => frame.event === 'log' && (frame.data as AnySessionEvent).type === 'turn/end',
    );
    await stream.waitFor(
      (frame) => frame.event === 'status' && (frame.data as { status: string }).status === 'idle',
    );
    const agent = f.harness.agents.get(id)!;
    const streamed = logFrames(stream.frames);
    // Every durable event exactly once, in seq order, with SSE id = seq.
    expect(streamed).toEqual(agent.session.events);
    expect(stream.frames.filter((frame) => frame.event === 'log').map((frame) => Number(frame.id))).toEqual(
      agent.session.events.map((event) => event.seq),
    );
    expect(typesOf(agent)).toEqual(approvedToolTurnTypes);
    // Live events arrive interleaved where they happened: running before turn/start, idle after turn/end.
    const order = stream.frames.map((frame) =>
      frame.event === 'log'
        ? (frame.data as AnySessionEvent).type
        : `${frame.event}:${JSON.stringify(frame.data).slice(0, 20)}`,
    );
    expect(order.indexOf('status:{"status":"running"}')).toBeLessThan(order.indexOf('turn/start'));
    expect(order.indexOf('status:{"status":"idle"}')).toBeGreaterThan(order.indexOf('turn/end'));
    stream.close();
  });

  it('resumes with Last-Event-ID (and from=) with no gap and no duplicate', async () => {
    f = await serverFixture([{ text: ['one ', 'two ', 'three'] }, { text: 'second turn' }]);
    const { id } = (await f.api('POST', '/api/sessions', {})).json as { id: string };
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'first' });
    const agent = f.harness.agents.get(id)!;
    await agent.whenIdle();
    const cut = Math.floor(agent.session.length / 2);
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'second' });
    await agent.whenIdle();

    const resumed = await openStream(f.server.port, `/api/sessions/${id}/stream?token=${f.server.token}`, {
      'last-event-id': String(cut),
    });
    const last = agent.session.length - 1;
    await resumed.waitFor((frame) => frame.event === 'log' && Number(frame.id) === last);
    expect(logFrames(resumed.frames).map((event) => event.seq)).toEqual(
      agent.session.events.slice(cut + 1).map((event) => event.seq),
    );
    resumed.close();

    const fromQuery = await openStream(
      f.server.port,
      `/api/sessions/${id}/stream?token=${f.server.token}&from=${cut}`,
    );
    await fromQuery.waitFor((frame) => frame.event === 'log' && Number(frame.id) === last);
    expect(logFrames(fromQuery.frames)).toEqual(agent.session.events.slice(cut));
    fromQuery.close();

    // The JSON listing agrees with the stream.
    const listed = (await f.api('GET', `/api/sessions/${id}/events?from=${cut}`)).json as {
      events: unknown[];
    };
    expect(listed.events).toEqual(agent.session.events.slice(cut));
  });

  it('a client that stops reading never slows the agent; it catches up from the log and gets a resync', async () => {
    const chunk = 'x'.repeat(4096);
    f = await serverFixture([{ text: Array.from({ length: 1500 }, () => chunk) }], {
      server: { liveEventLimit: 4 },
    });
    const { id } = (await f.api('POST', '/api/sessions', {})).json as { id: string };
    const stream = await openStream(f.server.port, `/api/sessions/${id}/stream?token=${f.server.token}`);
    await stream.waitFor((frame) => frame.event === 'hello');
    stream.pause();
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'stream a lot' });
    const agent = f.harness.agents.get(id)!;
    // Live inbox/status events pile up beyond the bound while the reader is paused.
    for (let index = 0; index < 6; index++)
      await f.api('POST', `/api/sessions/${id}/messages`, { text: `queued ${index}`, mode: 'inject' });
    await agent.whenIdle();
    expect(agent.session.eventsOfType('turn/end')).toHaveLength(1);
    stream.resume();
    const last = agent.session.length - 1;
    await stream.waitFor((frame) => frame.event === 'log' && Number(frame.id) === last, 30_000);
    expect(logFrames(stream.frames).map((event) => event.seq)).toEqual(
      agent.session.events.map((event) => event.seq),
    );
    const resync = stream.frames.find((frame) => frame.event === 'resync');
    expect(resync?.data).toMatchObject({ sessionId: id, status: 'idle' });
    stream.close();
  });
});
