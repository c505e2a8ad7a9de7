import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

/** What the demo's running example showed in the browser. */
export interface DemoFlowResult {
  /** The approval dialog's text when it opened (the shell step). */
  dialogText: string;
  /** The last answer's text once the turn completed. */
  summary: string;
}

/**
 * Plays the offline demo's running example in the Web UI as a person does: types a prompt, waits for
 * the approval dialog of its shell step, allows it once, and waits for the completed turn. Screenshots
 * of the dialog and the finished turn go to `screenshotDir` when given.
 */
export async function playDemo(page: Page, url: string, screenshotDir?: string): Promise<DemoFlowResult> {
  await page.goto(url);
  const input = page.getByTestId('composer-input');
  await input.fill('What is this project about?');
  await input.press('Enter');
  const dialog = page.getByTestId('approval-dialog');
  await dialog.waitFor({ timeout: 60_000 });
  // The dialog's content arrives with the approval request; wait for the command to be shown.
  for (let attempt = 0; attempt < 100 && !((await dialog.textContent()) ?? '').includes('wc'); attempt++) {
    await page.waitForTimeout(50);
  }
  const dialogText = (await dialog.textContent()) ?? '';
  if (screenshotDir !== undefined) {
    await mkdir(screenshotDir, { recursive: true });
    await page.screenshot({ path: join(screenshotDir, 'approval-dialog.png') });
  }
  await dialog.getByRole('button', { name: 'Allow once' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor({ timeout: 60_000 });
  await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
  const summary = (await page.getByTestId('assistant-message').last().textContent()) ?? '';
  if (screenshotDir !== undefined) await page.screenshot({ path: join(screenshotDir, 'finished-turn.png') });
  return { dialogText, summary };
}
