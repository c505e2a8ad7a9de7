import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiExport } from '../../scripts/api-surface.ts';
import { apiEntryPoints, readApiSurface, renderReport } from '../../scripts/api-surface.ts';

const root = resolve(import.meta.dirname, '..', '..');
let surface: Map<string, ApiExport[]>;

beforeAll(() => {
  surface = readApiSurface();
}, 120_000);

describe('the API report: the public surface only changes on purpose', () => {
  for (const entry of apiEntryPoints) {
    it(`'${entry.name}' exports exactly the names in ${entry.report} (npm run api:report regenerates it)`, () => {
      const committed = readFileSync(join(root, entry.report), 'utf8');
      expect(renderReport(entry.name, surface.get(entry.name)!)).toBe(committed);
    });
  }

  it('docs/api.md lists every export of every entry point, with its kind and doc sentence', () => {
    const docs = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
    const missing: string[] = [];
    for (const [entryName, exports] of surface) {
      for (const item of exports) {
        const line = `- \`${item.name}\`${item.kind === 'type' ? ' (type)' : ''}: ${item.summary}`;
        if (!docs.includes(line)) missing.push(`${entryName}: ${item.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every export states its contract in a doc comment', () => {
    const undocumented = [...surface.values()].flat().filter((item) => item.summary === '');
    expect(undocumented.map((item) => `${item.name} (${item.declaredIn})`)).toEqual([]);
  });

  it('internals stay out of the SDK: the step runner, stream assembly and status tables are not exported', () => {
    const names = new Set(surface.get('rein')!.map((item) => item.name));
    for (const internal of [
      'StepRunner',
      'ToolScheduler',
      'BlockAssembler',
      'normalizeStream',
      'codeForStatus',
      'snapshotJson',
      'throwIfAborted',
      'toolEventModes',
    ]) {
      expect(names.has(internal), internal).toBe(false);
    }
    expect(surface.get('rein')!.length).toBeLessThan(250);
  });
});
