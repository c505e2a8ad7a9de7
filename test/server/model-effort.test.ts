import { afterEach, describe, expect, it } from 'vitest';
import type { ServerFixture } from './support.ts';
import { serverFixture } from './support.ts';

describe('a model choice with its reasoning effort', () => {
  let f: ServerFixture;
  afterEach(async () => {
    await f.close();
  });

  it('PUT /model keeps the chosen effort (same model or another), and refuses a malformed one', async () => {
    f = await serverFixture([{ text: 'a' }, { text: 'b' }, { text: 'c' }]);
    const created = await f.api('POST', '/api/sessions', { provider: 'scripted', model: 'test-model' });
    const id = (created.json as { id: string }).id;
    const send = async (text: string): Promise<void> => {
      await f.api('POST', `/api/sessions/${id}/messages`, { text });
      await f.harness.agents.get(id)!.whenIdle();
    };
    await send('one');
    const same = await f.api('PUT', `/api/sessions/${id}/model`, {
      provider: 'scripted',
      model: 'test-model',
      reasoningEffort: 'high',
    });
    expect(same.json).toMatchObject({
      state: { model: { provider: 'scripted', model: 'test-model', reasoningEffort: 'high' } },
    });
    await send('two');
    await f.api('PUT', `/api/sessions/${id}/model`, {
      provider: 'scripted',
      model: 'other-model',
      reasoningEffort: '8000',
    });
    await send('three');
    expect(f.model.requests.map(({ model, reasoningEffort }) => ({ model, reasoningEffort }))).toEqual([
      { model: 'test-model', reasoningEffort: undefined },
      { model: 'test-model', reasoningEffort: 'high' },
      { model: 'other-model', reasoningEffort: '8000' },
    ]);
    const bad = await f.api('PUT', `/api/sessions/${id}/model`, {
      provider: 'scripted',
      model: 'test-model',
      reasoningEffort: 'very hard!',
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
  });
});
