import type { Browser } from 'playwright-core';
import type { ScreenCell } from './tui-terminal.ts';

// The 16 ANSI colours of a dark terminal theme; 16–255 follow xterm's cube and grey ramp.
const ansi16 = [
  '#1e1e1e',
  '#e06c75',
  '#98c379',
  '#e5c07b',
  '#61afef',
  '#c678dd',
  '#56b6c2',
  '#d4d4d4',
  '#5c6370',
  '#ff7b86',
  '#b5e890',
  '#ffd68a',
  '#82c4ff',
  '#e49cf5',
  '#7fd8e3',
  '#ffffff',
];
const background = '#1e1e1e';
const foreground = '#d4d4d4';

function paletteColor(index: number): string {
  if (index < 16) return ansi16[index]!;
  if (index < 232) {
    const value = index - 16;
    const level = (step: number): number => (step === 0 ? 0 : 55 + step * 40);
    const r = level(Math.floor(value / 36));
    const g = level(Math.floor(value / 6) % 6);
    const b = level(value % 6);
    return `rgb(${r},${g},${b})`;
  }
  const grey = 8 + (index - 232) * 10;
  return `rgb(${grey},${grey},${grey})`;
}

function colorOf(value: number | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  // xterm reports palette colours as indexes and true colours as 0xRRGGBB.
  if (value < 256) return paletteColor(value);
  return `#${value.toString(16).padStart(6, '0')}`;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The emulator's screen as an HTML page: one span per run of equally styled cells. */
export function screenHtml(grid: readonly (readonly ScreenCell[])[], title: string): string {
  const rows = grid.map((row) => {
    let html = '';
    let run = '';
    let style = '';
    const flush = (): void => {
      if (run !== '') html += `<span style="${style}">${escapeHtml(run)}</span>`;
      run = '';
    };
    for (const cell of row) {
      let fg = colorOf(cell.fg, foreground);
      let bg = colorOf(cell.bg, background);
      if (cell.inverse) [fg, bg] = [bg, fg];
      const css =
        `color:${fg};background:${bg};` +
        (cell.bold ? 'font-weight:bold;' : '') +
        (cell.italic ? 'font-style:italic;' : '') +
        (cell.dim ? 'opacity:0.6;' : '');
      if (css !== style) {
        flush();
        style = css;
      }
      run += cell.char;
    }
    flush();
    return `<div class="row">${html}</div>`;
  });
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>
    body { margin: 0; background: ${background}; }
    .screen { padding: 12px 14px; display: inline-block; background: ${background};
      font: 14px/17px "DejaVu Sans Mono", "Liberation Mono", monospace; white-space: pre; }
    .row { height: 17px; }
  </style></head><body><div class="screen">${rows.join('')}</div></body></html>`;
}

/** Renders the screen to a PNG file through Chromium. */
export async function writeScreenPng(
  browser: Browser,
  grid: readonly (readonly ScreenCell[])[],
  title: string,
  path: string,
): Promise<void> {
  const page = await browser.newPage({ deviceScaleFactor: 1 });
  try {
    await page.setContent(screenHtml(grid, title));
    await page.locator('.screen').screenshot({ path });
  } finally {
    await page.close();
  }
}
