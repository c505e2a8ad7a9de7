import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReinHarness } from '../../src/internal.ts';
import { createReinHarness, trustMcpProject } from '../../src/internal.ts';
import type { ReinServer } from '../../src/server/index.ts';
import { startReinServer } from '../../src/server/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import { everythingServer } from '../plugins/mcp/support.ts';
import type { Sandbox } from '../tools/support.ts';
import { sandbox } from '../tools/support.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage } from './support.ts';

const models = { 'test-model': { label: 'Scripted test model', contextWindow: 64_000 } };

describe.skipIf(!hasChromium)('Web UI: MCP servers from .mcp.json in a real browser', () => {
  const shared = browserSuite();
  let box: Sandbox;
  let harness: ReinHarness | undefined;
  let server: ReinServer | undefined;
  beforeEach(() => {
    box = sandbox('rein-web-mcp-');
  });
  afterEach(async () => {
    await server?.close();
    await harness?.dispose();
    server = undefined;
    harness = undefined;
    box.cleanup();
  });

  async function serve(model: ScriptedProvider): Promise<string> {
    harness = await createReinHarness({
      cwd: box.workspace,
      home: box.reinHome,
      env: {},
      providers: [model],
      model: 'scripted/test-model',
    });
    server = await startReinServer({
      harness,
      port: 0,
      cwd: box.workspace,
      workspace: box.workspace,
      home: box.reinHome,
      webRoot: shared.webRoot,
      mcp: harness.mcp,
    });
    return server.url;
  }

  it(
    'shows an untrusted project server with what to do; once trusted, one turn uses its tool and the card names the server',
    async () => {
      mkdirSync(box.workspace, { recursive: true });
      writeFileSync(
        join(box.workspace, '.mcp.json'),
        JSON.stringify({ mcpServers: { everything: everythingServer() } }),
      );
      const first = await serve(new ScriptedProvider({ responses: [], models }));
      const { page, problems } = await openPage(shared.context, first);
      const untrusted = page.locator('[data-testid="mcp-server"][data-server="everything"]');
      await untrusted.waitFor();
      expect(await untrusted.getAttribute('data-state')).toBe('untrusted');
      expect(await page.getByTestId('mcp-hint').textContent()).toContain('rein mcp trust');
      await page.close();
      await server!.close();
      await harness!.dispose();

      await trustMcpProject({ home: box.reinHome, cwd: box.workspace });
      const model = new ScriptedProvider({
        responses: [
          {
            toolCalls: [
              { id: 'call_echo', name: 'mcp__everything__echo', arguments: { message: 'from the browser' } },
            ],
          },
          { text: 'The MCP server answered.' },
        ],
        models,
      });
      const second = await serve(model);
      const opened = await openPage(shared.context, second);
      await opened.page.getByTestId('composer-input').fill('use the echo tool');
      await opened.page.getByTestId('composer-input').press('Enter');
      const card = opened.page.locator('[data-testid="tool-card"][data-call-id="call_echo"]');
      await card.locator('[data-testid="tool-state"]', { hasText: 'done' }).waitFor();
      expect(await card.getByTestId('tool-server').textContent()).toBe('MCP · everything');
      expect(await card.textContent()).toContain('Echo: from the browser');
      await opened.page.getByText('The MCP server answered.').waitFor();
      const ready = opened.page.locator(
        '[data-testid="mcp-server"][data-server="everything"][data-state="ready"]',
      );
      await ready.waitFor();
      expect(await ready.textContent()).toMatch(/^everything · ready · \d+ tools$/);
      expect([...problems, ...opened.problems]).toEqual([]);
    },
    browserTestTimeout,
  );
});
