import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage } from './support.ts';

// The Web UI's approval dialog offers what the CLI, TUI and ACP offer: deny for the rest of the session.
describe.skipIf(!hasChromium)('Web UI: deny for this session', () => {
  const shared = browserSuite();
  let f: ServerFixture | undefined;
  beforeAll(async () => {
    f = await serverFixture(
      [
        { toolCalls: [{ id: 'read-1', name: 'read_file', arguments: { path: '.env' } }] },
        { text: 'Understood, I will not read it.' },
      ],
      { server: { webRoot: shared.webRoot } },
    );
  }, browserTestTimeout);
  afterAll(async () => {
    await f?.close();
  });

  it(
    'records deny-session with the reason, and the call gets a TOOL_DENIED result',
    async () => {
      const { page, problems } = await openPage(shared.context, f!.server.url);
      await page.getByTestId('composer-input').fill('Read the env file');
      await page.getByTestId('composer-input').press('Enter');
      const dialog = page.getByTestId('approval-dialog');
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Deny…' }).click();
      await dialog.getByLabel('Why not? (the model reads this)').fill('secrets stay private');
      await dialog.getByRole('button', { name: 'Deny for this session' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      expect(await page.getByTestId('tool-card').innerText()).toContain(
        'Approval: denied for this session (secrets stay private)',
      );

      const agent = f!.harness.agents.list()[0]!;
      await agent.whenIdle();
      const events = agent.session.events;
      const requested = events.find((event) => event.type === 'tool/approval-requested');
      const decided = events.filter((event) => event.type === 'tool/approval-decided');
      expect(decided.map((event) => event.data)).toEqual([
        {
          requestId: (requested?.data as { requestId: string }).requestId,
          callId: 'read-1',
          decision: 'deny-session',
          reason: 'secrets stay private',
        },
      ]);
      const result = events.find((event) => event.type === 'tool/result');
      expect((result?.data as { error?: { code: string } }).error?.code).toBe('TOOL_DENIED');
      expect(events.map((event) => event.type).indexOf('tool/approval-decided')).toBeLessThan(
        events.map((event) => event.type).indexOf('tool/result'),
      );
      expect(problems).toEqual([]);
      await page.close();
    },
    browserTestTimeout,
  );
});
