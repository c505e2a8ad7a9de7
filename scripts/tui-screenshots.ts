// `npx tsx scripts/tui-screenshots.ts`: drives the real TUI in a pseudo-terminal against a scripted vendor
// on loopback, reads the screen back through @xterm/headless and renders it to PNGs in docs/screenshots/
// through Debian's Chromium, so the README shows what a person sees.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { launchBrowser } from '../test/web/support.ts';
import { writeScreenPng } from '../test/tui/screen-png.ts';
import { tuiFixture } from '../test/tui/tui-fixture.ts';
import { keys } from '../test/tui/tui-terminal.ts';

const out = resolve(import.meta.dirname, '../docs/screenshots');
mkdirSync(out, { recursive: true });
delete process.env.NO_COLOR;

const answer = [
  '## What `notes.md` says',
  '',
  'The notes cover **two** things:',
  '',
  '1. the release checklist',
  '2. who reviews what',
  '',
  '| step | owner |',
  '| ---- | ----- |',
  '| tag  | ana   |',
  '| docs | ben   |',
  '',
  '```ts',
  'export function release(tag: string): void {',
  '  console.log(`releasing ${tag}`);',
  '}',
  '```',
].join('\n');

const fixture = await tuiFixture([
  {
    reasoning: 'The user wants a summary of a file outside the workspace; I need to read it first.',
    text: "I'll read the notes first.",
    toolCalls: [{ id: 'call_1', name: 'read_file', arguments: JSON.stringify({ path: '../notes.md' }) }],
  },
  { text: answer.match(/[\s\S]{1,8}/g)!, delayMs: 4 },
  {
    text: 'Adding the missing step to the checklist.',
    toolCalls: [
      {
        id: 'call_2',
        name: 'edit_file',
        arguments: JSON.stringify({
          path: 'CHECKLIST.md',
          old_string: '- tag\n',
          new_string: '- tag\n- announce\n',
        }),
      },
    ],
  },
  { text: Array.from({ length: 200 }, () => 'checking '), delayMs: 60 },
]);
writeFileSync(join(fixture.box.root, 'notes.md'), '# Notes\n\nrelease checklist; reviews\n');
writeFileSync(join(fixture.box.workspace, 'CHECKLIST.md'), '# Checklist\n\n- build\n- tag\n- docs\n');
const browser = await launchBrowser();
try {
  const tui = fixture.start([], { cols: 100, rows: 30 });
  await tui.waitFor('Type a prompt');
  tui.type('summarize ../notes.md');
  tui.type(keys.enter);
  await tui.waitFor('Allow read_file?');
  await writeScreenPng(browser, tui.cells(), 'approval', join(out, 'tui-approval.png'));
  tui.type('y');
  await tui.waitFor((text) => text.includes('turn 1 · completed') && text.includes(' idle'));
  await writeScreenPng(browser, tui.cells(), 'transcript', join(out, 'tui-transcript.png'));
  tui.type('add an announce step to CHECKLIST.md');
  tui.type(keys.enter);
  await tui.waitFor('Allow edit_file?');
  await writeScreenPng(browser, tui.cells(), 'edit diff', join(out, 'tui-edit-diff.png'));
  tui.type('y');
  await tui.waitFor('checking checking');
  tui.type('then update the changelog');
  tui.type(keys.altEnter);
  tui.type('and run the tests');
  tui.type(keys.ctrlQ);
  await tui.waitFor('queued (2)');
  tui.type(keys.shiftTab);
  await tui.waitFor('Enter send now');
  await writeScreenPng(browser, tui.cells(), 'queue', join(out, 'tui-queue.png'));
  tui.type(keys.escape);
  tui.kill();
  console.log(`wrote the screenshots to ${out}`);
} finally {
  await browser.close();
  await fixture.close();
}
