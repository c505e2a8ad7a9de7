// `npm run api:report`: regenerates the committed API report (api-report/*.txt, compared by
// test/package/api-report.test.ts) and the export listing of docs/api.md from the sources.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  apiDocsMarkers,
  apiEntryPoints,
  readApiSurface,
  renderApiDocs,
  renderReport,
} from './api-surface.ts';

const root = resolve(import.meta.dirname, '..');
const surface = readApiSurface();
for (const entry of apiEntryPoints) {
  const path = join(root, entry.report);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, renderReport(entry.name, surface.get(entry.name) ?? []));
  console.log(`${entry.report}: ${surface.get(entry.name)?.length ?? 0} exports`);
}
const docsPath = join(root, 'docs', 'api.md');
const docs = readFileSync(docsPath, 'utf8');
const start = docs.indexOf(apiDocsMarkers.start);
const end = docs.indexOf(apiDocsMarkers.end);
if (start === -1 || end < start)
  throw new Error(`docs/api.md lacks the markers ${apiDocsMarkers.start} … ${apiDocsMarkers.end}`);
writeFileSync(
  docsPath,
  `${docs.slice(0, start + apiDocsMarkers.start.length)}\n\n${renderApiDocs(surface)}\n${docs.slice(end)}`,
);
console.log('docs/api.md: the export listing is regenerated');
