import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from './rein-process.ts';
import { sandbox, startRein, waitForOutput } from './rein-process.ts';

let box: Sandbox;
let web: ReturnType<typeof startRein> & { url: URL };

beforeAll(async () => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  const started = startRein(['web', '--port', '0'], { cwd: box.workspace, env: box.env });
  const printed = await waitForOutput(
    started.child,
    'stdout',
    (text) => /Rein is running at \S+\n/.test(text),
    120_000,
  );
  web = { ...started, url: new URL(/Rein is running at (\S+)\n/.exec(printed)![1]!) };
}, 180_000);

afterAll(async () => {
  web.child.kill('SIGINT');
  await web.result;
  box.cleanup();
});

/** A raw connection to the server, collecting what it answers and whether it closed. */
async function open(): Promise<{ socket: Socket; answer: () => string; closed: Promise<'closed'> }> {
  const socket = connect(Number(web.url.port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<'closed'>((resolve) => socket.once('close', () => resolve('closed')));
  return { socket, answer: () => received, closed };
}

const stillOpen = (ms: number): Promise<'still open'> =>
  new Promise((resolve) => setTimeout(() => resolve('still open'), ms).unref());

describe('rein web under slow clients', () => {
  it('closes a connection whose request headers never finish', async () => {
    const { socket, closed } = await open();
    socket.write(`GET /api/sessions HTTP/1.1\r\nHost: ${web.url.host}\r\nX-Slow: `);
    // Trickle a byte now and then, as a slowloris would; the headers never end.
    const trickle = setInterval(() => socket.writable && socket.write('a'), 500);
    try {
      expect(await Promise.race([closed, stillOpen(20_000)])).toBe('closed');
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  }, 30_000);

  it('answers an oversize body with 413 and closes the connection without reading the rest', async () => {
    const token = web.url.searchParams.get('token')!;
    const { socket, answer, closed } = await open();
    const total = 64 * 1024 * 1024;
    socket.write(
      `POST /api/sessions HTTP/1.1\r\nHost: ${web.url.host}\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    let offered = 0;
    // Keeps sending while the kernel takes it; a server that reads everything would take all 64 MiB.
    const pump = (): void => {
      while (offered < total && !socket.destroyed) {
        offered += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    pump();
    expect(await Promise.race([closed, stillOpen(20_000)])).toBe('closed');
    expect(answer()).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer()).toContain('BODY_TOO_LARGE');
    expect(answer().toLowerCase()).toContain('connection: close');
    expect(socket.bytesWritten).toBeLessThan(total / 2);
  }, 30_000);

  it('cuts a chunked body off at the limit with 413 and closes the connection', async () => {
    const token = web.url.searchParams.get('token')!;
    const { socket, answer, closed } = await open();
    socket.write(
      `POST /api/sessions HTTP/1.1\r\nHost: ${web.url.host}\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const frame = Buffer.concat([
      Buffer.from(`${piece.length.toString(16)}\r\n`),
      piece,
      Buffer.from('\r\n'),
    ]);
    let frames = 0;
    const pump = (): void => {
      while (frames < 1024 && !socket.destroyed) {
        frames++;
        if (!socket.write(frame)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    pump();
    expect(await Promise.race([closed, stillOpen(20_000)])).toBe('closed');
    expect(answer()).toMatch(/^HTTP\/1\.1 413 /);
    expect(frames).toBeLessThan(1024);
  }, 30_000);
});
