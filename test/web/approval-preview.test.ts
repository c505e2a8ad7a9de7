import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/index.ts';
import { builtinTools } from '../../src/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage, screenshotsDir } from './support.ts';

describe.skipIf(!hasChromium)(
  'Web UI: a file change is shown as a diff before the approval (issue 23 item 11)',
  () => {
    const shared = browserSuite();
    let f: ServerFixture | undefined;
    let root: string | undefined;
    afterEach(async () => {
      await f?.close();
      if (root !== undefined) await rm(root, { recursive: true, force: true });
      f = undefined;
    });

    it(
      'edit_file shows the change and write_file the new file, highlighted, never escaped JSON',
      async () => {
        root = await mkdtemp(join(tmpdir(), 'rein-preview-'));
        const workspace = join(root, 'workspace');
        await mkdir(workspace);
        await writeFile(join(workspace, 'notes.md'), 'alpha\nbeta\n');
        const tools = builtinTools({ workspace, reinHome: join(root, 'home') }).filter((tool) =>
          ['edit_file', 'write_file'].includes(tool.name),
        ) as Tool<never>[];
        f = await serverFixture(
          [
            {
              toolCalls: [
                {
                  id: 'edit',
                  name: 'edit_file',
                  arguments: { path: 'notes.md', old_string: 'beta', new_string: 'gamma "quoted"' },
                },
              ],
            },
            {
              toolCalls: [
                {
                  id: 'write',
                  name: 'write_file',
                  arguments: { path: 'plan.md', content: '# Plan\n\n- "first" step\n' },
                },
              ],
            },
            { text: 'Done.' },
          ],
          { tools, server: { webRoot: shared.webRoot, cwd: workspace } },
        );
        f.harness.hooks.on('tools/pre-execute', async ({ call }, next) =>
          call.name === 'edit_file' || call.name === 'write_file'
            ? { kind: 'ask', reason: 'changes a file' }
            : next(),
        );
        const { page, problems } = await openPage(shared.context, f.server.url);
        await page.getByTestId('composer-input').fill('Edit the notes and write a plan');
        await page.getByTestId('composer-input').press('Enter');

        const dialog = page.getByTestId('approval-dialog');
        const preview = dialog.getByTestId('approval-preview');
        await preview.waitFor();
        expect(await preview.locator('.preview-title').textContent()).toBe('Changes to notes.md');
        expect(await preview.locator('.diff-del').allTextContents()).toEqual(['-beta\n']);
        expect(await preview.locator('.diff-add').allTextContents()).toEqual(['+gamma "quoted"\n']);
        expect(await dialog.innerText()).not.toMatch(/\\n|\\"/);
        await mkdir(screenshotsDir, { recursive: true });
        await page.screenshot({ path: join(screenshotsDir, 'approval-edit-diff.png') });
        // Nothing changed on disk before the decision.
        expect(await readFile(join(workspace, 'notes.md'), 'utf8')).toBe('alpha\nbeta\n');
        await dialog.getByRole('button', { name: 'Allow once' }).click();

        await expect.poll(() => preview.locator('.preview-title').textContent()).toBe('New file plan.md');
        expect(await preview.locator('.diff-add').allTextContents()).toEqual([
          '+# Plan\n',
          '+\n',
          '+- "first" step\n',
        ]);
        expect(await dialog.innerText()).not.toMatch(/\\n|\\"/);
        await page.screenshot({ path: join(screenshotsDir, 'approval-new-file.png') });
        await dialog.getByRole('button', { name: 'Allow once' }).click();
        await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
        expect(await readFile(join(workspace, 'plan.md'), 'utf8')).toBe('# Plan\n\n- "first" step\n');
        expect(problems).toEqual([]);
      },
      browserTestTimeout,
    );
  },
);
