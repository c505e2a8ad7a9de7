import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startReinServer } from '../../src/server/index.ts';
import { createHarness } from '../../src/index.ts';
import type { ServerFixture } from './support.ts';
import { rawRequest, serverFixture } from './support.ts';

// Probes over plain HTTP: every refusal leaves the agent untouched.
describe('server security', () => {
  let f: ServerFixture;
  let sessionId: string;
  let webRoot: string;

  beforeEach(async () => {
    webRoot = await mkdtemp(join(tmpdir(), 'rein-web-'));
    await writeFile(join(webRoot, 'index.html'), '<!doctype html><title>Rein</title>');
    f = await serverFixture([{ text: 'never sent' }], { server: { webRoot } });
    const created = await f.api('POST', '/api/sessions', {});
    expect(created.status).toBe(201);
    sessionId = (created.json as { id: string }).id;
  });

  afterEach(async () => {
    await f.close();
  });

  function logLength(): number {
    return f.harness.agents.get(sessionId)!.session.length;
  }

  const send = { text: 'hello', mode: 'followup' };

  it('binds to loopback and prints the URL with its token', () => {
    expect(f.server.url).toBe(`http://127.0.0.1:${f.server.port}/?token=${f.server.token}`);
    expect(f.server.token.length).toBeGreaterThanOrEqual(32);
  });

  it('refuses to bind anywhere but loopback', async () => {
    const harness = createHarness();
    await expect(startReinServer({ harness, host: '0.0.0.0' })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });
  });

  it('answers 401 for a missing or wrong token, on the API and the event stream; nothing reaches the agent', async () => {
    const before = logLength();
    const missing = await f.api('POST', `/api/sessions/${sessionId}/messages`, send, { token: null });
    expect(missing.status).toBe(401);
    expect(missing.json).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    const wrong = await f.api('POST', `/api/sessions/${sessionId}/messages`, send, { token: 'x'.repeat(32) });
    expect(wrong.status).toBe(401);
    const query = await f.api('POST', `/api/sessions/${sessionId}/messages?token=${f.server.token}`, send, {
      token: null,
    });
    // The query token is accepted only where a browser cannot send headers (EventSource).
    expect(query.status).toBe(401);
    const list = await f.api('GET', '/api/sessions', undefined, { token: null });
    expect(list.status).toBe(401);
    const stream = await rawRequest(f.server.port, 'GET', `/api/sessions/${sessionId}/stream?token=nope`, {});
    expect(stream.status).toBe(401);
    expect(logLength()).toBe(before);
    expect(f.model.requests).toHaveLength(0);
  });

  it('answers 403 for a foreign Origin, a non-loopback Host or a cross-site fetch', async () => {
    const before = logLength();
    const path = `/api/sessions/${sessionId}/messages`;
    for (const origin of [
      'http://evil.example',
      `http://127.0.0.1:${f.server.port + 1}`,
      'null',
      `https://127.0.0.1:${f.server.port}`,
    ]) {
      const answer = await f.api('POST', path, send, { headers: { origin } });
      expect(answer.status, origin).toBe(403);
      expect(answer.json).toMatchObject({ error: { code: 'FORBIDDEN_ORIGIN' } });
    }
    for (const host of [
      'evil.example',
      `evil.example:${f.server.port}`,
      `127.0.0.1:${f.server.port + 1}`,
      `10.0.0.1:${f.server.port}`,
    ]) {
      const answer = await f.api('POST', path, send, { headers: { host } });
      expect(answer.status, host).toBe(403);
      expect(answer.json).toMatchObject({ error: { code: 'FORBIDDEN_HOST' } });
    }
    const staticPage = await rawRequest(f.server.port, 'GET', '/', { host: 'rebind.example' });
    expect(staticPage.status).toBe(403);
    const crossSite = await f.api('POST', path, send, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    const own = await f.api('GET', '/api/sessions', undefined, {
      headers: { origin: `http://127.0.0.1:${f.server.port}` },
    });
    expect(own.status).toBe(200);
    expect(logLength()).toBe(before);
    expect(f.model.requests).toHaveLength(0);
  });

  it('answers 415 for a body that is not JSON, 400 for malformed JSON, 413 for a huge body', async () => {
    const before = logLength();
    const path = `/api/sessions/${sessionId}/messages`;
    const form = await f.api('POST', path, undefined, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'text=hello&mode=followup',
    });
    expect(form.status).toBe(415);
    expect(form.json).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    const plain = await f.api('POST', path, undefined, {
      headers: { 'content-type': 'text/plain' },
      rawBody: JSON.stringify(send),
    });
    expect(plain.status).toBe(415);
    const none = await f.api('POST', path, undefined, { rawBody: JSON.stringify(send) });
    expect(none.status).toBe(415);
    const malformed = await f.api('POST', path, undefined, {
      headers: { 'content-type': 'application/json' },
      rawBody: '{"text":',
    });
    expect(malformed.status).toBe(400);
    const huge = await f.api('POST', path, { text: 'x'.repeat(1_100_000) });
    expect(huge.status).toBe(413);
    expect(logLength()).toBe(before);
    expect(f.model.requests).toHaveLength(0);
  });

  it('sends a strict CSP and no CORS headers; OPTIONS is not a preflight', async () => {
    const page = await rawRequest(f.server.port, 'GET', '/', {});
    expect(page.status).toBe(200);
    const csp = page.headers['content-security-policy']!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const preflight = await rawRequest(f.server.port, 'OPTIONS', `/api/sessions/${sessionId}/messages`, {
      origin: 'http://evil.example',
      'access-control-request-method': 'POST',
    });
    expect(preflight.status).toBe(403);
    const ownPreflight = await f.api('OPTIONS', '/api/sessions');
    expect(ownPreflight.status).toBe(405);
    for (const answer of [page, preflight, ownPreflight]) {
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('serves no file outside the web root', async () => {
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/..%2fpackage.json', '/%00']) {
      const answer = await rawRequest(f.server.port, 'GET', path, {});
      expect([400, 404], path).toContain(answer.status);
      expect(answer.text).not.toContain('"name": "rein"');
    }
  });

  it('answers 404 with a message for an unknown session', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/sessions/nope', undefined],
      ['POST', '/api/sessions/nope/messages', send],
      ['POST', '/api/sessions/nope/cancel', {}],
      ['GET', '/api/sessions/nope/stream', undefined],
    ] as const) {
      const answer = await f.api(method, path, body);
      expect(answer.status, path).toBe(404);
      expect(answer.json).toMatchObject({
        error: { code: 'SESSION_NOT_FOUND', message: expect.stringContaining('nope') },
      });
    }
  });
});
