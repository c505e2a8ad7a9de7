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
async function open(
  options: { allowHalfOpen?: boolean } = {},
): Promise<{ socket: Socket; answer: () => string; closed: Promise<'closed'> }> {
  const socket = connect({ port: Number(web.url.port), host: '127.0.0.1', ...options });
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<'closed'>((resolve) => socket.once('close', () => resolve('closed')));
  return { socket, answer: () => received, closed };
}

const stillOpen = (ms: number): Promise<'still open'> =>
  new Promise((resolve) => setTimeout(() => resolve('still open'), ms).unref());

/** How an oversize body is framed: a declared `Content-Length`, or chunks with no declared size. */
type Framing = 'length' | 'chunked';

/**
 * Posts a `bytes`-long body to the API, writing for as long as the kernel takes it, and returns the
 * connection. A `polite` client closes once it has read the whole answer; the default one keeps
 * writing, even after the server's FIN (half-open), so a server that reads the rest would take it all.
 */
async function postOversize(
  framing: Framing,
  bytes: number,
  polite = false,
): Promise<{ socket: Socket; answer: () => string; closed: Promise<'closed'> }> {
  const token = web.url.searchParams.get('token')!;
  const connection = await open({ allowHalfOpen: true });
  const { socket, answer } = connection;
  if (polite) {
    socket.on('data', () => {
      const text = answer();
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text);
      if (end >= 0 && length !== null && text.length >= end + 4 + Number(length[1])) socket.destroy();
    });
  }
  socket.write(
    `POST /api/sessions HTTP/1.1\r\nHost: ${web.url.host}\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\n` +
      (framing === 'length' ? `Content-Length: ${bytes}\r\n\r\n` : 'Transfer-Encoding: chunked\r\n\r\n'),
  );
  const piece = Buffer.alloc(64 * 1024, 0x20);
  const frame =
    framing === 'length'
      ? piece
      : Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
  let offered = 0;
  const pump = (): void => {
    while (offered < bytes && !socket.destroyed) {
      offered += piece.length;
      if (!socket.write(frame)) {
        socket.once('drain', pump);
        return;
      }
    }
  };
  pump();
  return connection;
}

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

  it.each(['length', 'chunked'] as const)(
    'answers every one of many oversize bodies in a row (%s) with 413, the client still writing',
    async (framing) => {
      // The server answers while the client is still writing. A server that then resets the connection
      // makes the client's next write fail, and the client drops the connection before it has read the
      // answer. That depends on timing, so the scenario runs many times.
      const lost: string[] = [];
      for (let round = 0; round < 25; round++) {
        try {
          const { answer, closed } = await postOversize(framing, 2 * 1024 * 1024, true);
          const outcome = await Promise.race([closed, stillOpen(10_000)]);
          if (
            outcome !== 'closed' ||
            !/^HTTP\/1\.1 413 [^]*connection: close[^]*BODY_TOO_LARGE/i.test(answer())
          ) {
            lost.push(`#${round}: ${outcome}, answer ${JSON.stringify(answer().slice(0, 40))}`);
          }
        } catch (error) {
          lost.push(`#${round}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
        }
      }
      expect(lost).toEqual([]);
    },
    60_000,
  );

  it('still serves the API after all those refused bodies', async () => {
    const token = web.url.searchParams.get('token')!;
    const listed = await fetch(new URL('/api/sessions', web.url), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
  });

  it('answers an oversize body with 413 and closes the connection without reading the rest', async () => {
    const total = 64 * 1024 * 1024;
    const { socket, answer, closed } = await postOversize('length', total);
    const outcome = await Promise.race([closed, stillOpen(20_000)]);
    // What the kernel buffers took: a server that read the rest would have taken all 64 MiB.
    expect(socket.bytesWritten).toBeLessThan(total / 2);
    expect(outcome).toBe('closed');
    expect(answer()).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer()).toContain('BODY_TOO_LARGE');
    expect(answer().toLowerCase()).toContain('connection: close');
  }, 30_000);

  it('cuts a chunked body off at the limit with 413 and closes the connection', async () => {
    const total = 64 * 1024 * 1024;
    const { socket, answer, closed } = await postOversize('chunked', total);
    const outcome = await Promise.race([closed, stillOpen(20_000)]);
    expect(socket.bytesWritten).toBeLessThan(total / 2);
    expect(outcome).toBe('closed');
    expect(answer()).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer().toLowerCase()).toContain('connection: close');
  }, 30_000);
});
