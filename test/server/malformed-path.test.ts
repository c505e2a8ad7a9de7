import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServerFixture } from './support.ts';
import { serverFixture } from './support.ts';

describe('malformed request paths', () => {
  let f: ServerFixture;
  beforeEach(async () => {
    f = await serverFixture([{ text: 'never sent' }]);
  });
  afterEach(async () => {
    await f.close();
  });

  it('a bad percent-escape in a session id is a 400 INVALID_PATH, on the event stream and the API', async () => {
    for (const path of ['/api/sessions/%zz/events', '/api/sessions/%E0%A4%A/messages']) {
      const answer = path.endsWith('events')
        ? await f.api('GET', path)
        : await f.api('POST', path, { text: 'x', mode: 'followup' });
      expect([answer.status, answer.text]).toEqual([400, expect.any(String)]);
      expect(answer.json).toMatchObject({ error: { code: 'INVALID_PATH' } });
    }
    expect(f.model.requests).toHaveLength(0);
  });
});
