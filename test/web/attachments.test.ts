import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import type { ContentBlock } from '../../src/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage, screenshotsDir } from './support.ts';

// A 2×2 red PNG.
const png =
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==';

/** Drops files on the composer the way a file manager does (a DataTransfer with File objects). */
async function dropFiles(page: Page, files: { name: string; type: string; base64: string }[]): Promise<void> {
  await page.getByTestId('composer').evaluate((target, list) => {
    const transfer = new DataTransfer();
    for (const file of list) {
      const bytes = Uint8Array.from(atob(file.base64), (char) => char.charCodeAt(0));
      transfer.items.add(new File([bytes], file.name, { type: file.type }));
    }
    target.dispatchEvent(
      new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }),
    );
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, files);
}

/** Pastes a file into the message box, as copying a file and pressing Ctrl+V does. */
async function pasteFile(page: Page, file: { name: string; type: string; text: string }): Promise<void> {
  await page.getByTestId('composer-input').evaluate((target, pasted) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([pasted.text], pasted.name, { type: pasted.type }));
    target.dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }),
    );
  }, file);
}

describe.skipIf(!hasChromium)('Web UI: attaching images and files (issue 23 item 17)', () => {
  const shared = browserSuite();
  let f: ServerFixture | undefined;
  afterEach(async () => {
    await f?.close();
    f = undefined;
  });

  it(
    'a dropped image and a pasted text file reach the model; the image shows in the message',
    async () => {
      f = await serverFixture([{ text: 'A small red square, and your notes.' }], {
        server: { webRoot: shared.webRoot },
      });
      const { page, problems } = await openPage(shared.context, f.server.url);
      await page.locator('[data-testid="model-picker"]').waitFor();
      await expect.poll(() => page.getByTestId('model-picker').inputValue()).toBe('scripted/test-model');
      await dropFiles(page, [{ name: 'square.png', type: 'image/png', base64: png }]);
      await pasteFile(page, { name: 'notes.txt', type: 'text/plain', text: 'first note\nsecond note\n' });
      await expect
        .poll(() => page.getByTestId('attachment').allTextContents())
        .toEqual(['square.png✕', '📄notes.txt✕']);
      await page.getByTestId('composer-input').fill('What is in these?');
      await mkdir(screenshotsDir, { recursive: true });
      await page.screenshot({ path: join(screenshotsDir, 'attachments-composer.png') });
      await page.getByTestId('composer-input').press('Enter');

      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      await expect.poll(() => page.getByTestId('attachment').count()).toBe(0);
      const image = page.getByTestId('user-image');
      await image.waitFor();
      expect(await image.evaluate((element) => (element as HTMLImageElement).naturalWidth)).toBe(2);
      expect(await page.getByTestId('user-message').textContent()).toContain('Attached file `notes.txt`');
      await page.screenshot({ path: join(screenshotsDir, 'attachments-sent.png') });

      const sent = f.model.requests[0]!.messages.at(-1)!.content as ContentBlock[];
      expect(sent).toEqual([
        {
          type: 'text',
          text: 'What is in these?\n\nAttached file `notes.txt`:\n\n```\nfirst note\nsecond note\n```',
        },
        { type: 'image', mediaType: 'image/png', data: png },
      ]);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'a model without image input refuses an image in the composer and the API alike',
    async () => {
      f = await serverFixture([], { server: { webRoot: shared.webRoot } });
      const { page, problems } = await openPage(shared.context, f.server.url);
      await page.getByTestId('model-picker').selectOption('scripted/other-model');
      await dropFiles(page, [{ name: 'square.png', type: 'image/png', base64: png }]);
      await expect
        .poll(() => page.getByTestId('attachment-refused').textContent())
        .toBe('square.png: the selected model does not accept images; pick one that does');
      expect(await page.getByTestId('attachment').count()).toBe(0);

      const created = await f.api('POST', '/api/sessions', { provider: 'scripted', model: 'other-model' });
      const id = (created.json as { id: string }).id;
      const refused = await f.api('POST', `/api/sessions/${id}/messages`, {
        text: 'look',
        images: [{ mediaType: 'image/png', data: png }],
      });
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({ error: { code: 'IMAGES_UNSUPPORTED' } });
      const bad = await f.api('POST', `/api/sessions/${id}/messages`, {
        text: 'look',
        images: [{ mediaType: 'image/tiff', data: png }],
      });
      expect(bad.json).toMatchObject({ error: { code: 'INVALID_IMAGE' } });
      expect(f.harness.agents.get(id)?.session.eventsOfType('user/message') ?? []).toEqual([]);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );
});
