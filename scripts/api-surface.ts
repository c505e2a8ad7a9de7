// The public API of the package, read from the sources with the TypeScript compiler: every name each entry
// point exports, whether it is a value or only a type, where it is declared, and its doc sentence.
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');

/** The package's entry points (package.json `exports`) and their sources. */
export const apiEntryPoints = [
  { name: 'rein', source: 'src/index.ts', report: 'api-report/rein.txt' },
  { name: 'rein/testing', source: 'src/testing/index.ts', report: 'api-report/rein-testing.txt' },
] as const;

/** One exported name of an entry point. */
export interface ApiExport {
  readonly name: string;
  /** `value` when it exists at run time (function, class, constant), `type` when it is a type only. */
  readonly kind: 'value' | 'type';
  /** The source file that declares it, relative to the package root. */
  readonly declaredIn: string;
  /** The first sentence of its doc comment ('' when it has none). */
  readonly summary: string;
}

/** Reads every entry point's exports, sorted by name. */
export function readApiSurface(): Map<string, ApiExport[]> {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, dirname(configPath));
  const program = ts.createProgram({
    rootNames: apiEntryPoints.map((entry) => join(root, entry.source)),
    options: { ...parsed.options, noEmit: true },
  });
  const checker = program.getTypeChecker();
  const surface = new Map<string, ApiExport[]>();
  for (const entry of apiEntryPoints) {
    const file = program.getSourceFile(join(root, entry.source));
    const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    if (module === undefined) throw new Error(`cannot read the exports of ${entry.source}`);
    const exports = checker.getExportsOfModule(module).map((symbol): ApiExport => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const declaration = target.declarations?.[0];
      return {
        name: symbol.name,
        kind: isTypeOnly(symbol, target) ? 'type' : 'value',
        declaredIn: declaration === undefined ? '' : relative(root, declaration.getSourceFile().fileName),
        summary: firstSentence(ts.displayPartsToString(target.getDocumentationComment(checker))),
      };
    });
    surface.set(
      entry.name,
      exports.sort((a, b) => a.name.localeCompare(b.name, 'en')),
    );
  }
  return surface;
}

// A class exported with `export type` is a type to its users: it cannot be constructed or tested with
// `instanceof` through this entry point.
function isTypeOnly(symbol: ts.Symbol, target: ts.Symbol): boolean {
  if ((target.flags & ts.SymbolFlags.Value) === 0) return true;
  return (symbol.declarations ?? []).some((declaration) => {
    const specifier = ts.isExportSpecifier(declaration) ? declaration : undefined;
    return specifier !== undefined && (specifier.isTypeOnly || specifier.parent.parent.isTypeOnly);
  });
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  // Code spans and abbreviations are masked so that their dots do not end the sentence.
  const masked = flat
    .replace(/`[^`]*`/g, (code) => '_'.repeat(code.length))
    .replace(/\b(?:e\.g|i\.e|etc|vs)\./g, (abbreviation) => '_'.repeat(abbreviation.length));
  const end = /[.!?](?=\s|$)/.exec(masked);
  return end === null ? flat : flat.slice(0, end.index + 1);
}

/** The committed report of one entry point: a header, then one `kind name` line per export. */
export function renderReport(entryName: string, exports: readonly ApiExport[]): string {
  const lines = [
    `# The exports of '${entryName}' (one per line: value or type, then the name).`,
    '# Regenerate with `npm run api:report` after changing the public API on purpose.',
    ...exports.map((item) => `${item.kind} ${item.name}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** Where a declaring file's exports are listed in docs/api.md. */
export function sectionOf(declaredIn: string): string {
  const path = declaredIn.replace(/^src\//, '');
  const plugin = /^plugins\/([^/]+)\//.exec(path)?.[1];
  if (plugin !== undefined) return `Plugin: ${plugin}`;
  const provider = /^providers\/([^/]+)\//.exec(path)?.[1];
  if (provider === 'scripted') return 'Scripted provider';
  if (provider !== undefined) return 'Providers';
  const folder = path.includes('/') ? path.split('/')[0]! : path.replace(/\.ts$/, '');
  return sectionTitles[folder] ?? folder;
}

const sectionTitles: Readonly<Record<string, string>> = {
  harness: 'Harness and agents',
  'app-harness': 'Harness and agents',
  'rein-warning': 'Harness and agents',
  agent: 'Harness and agents',
  hooks: 'Hooks',
  llm: 'Messages, models and errors',
  session: 'Session log and stores',
  prompt: 'System prompt',
  tools: 'Tools and approvals',
  config: 'Configuration',
  testing: 'Test helpers',
};

const sectionOrder = [
  'Harness and agents',
  'Hooks',
  'Messages, models and errors',
  'Session log and stores',
  'System prompt',
  'Tools and approvals',
  'Providers',
  'Configuration',
  'Scripted provider',
  'Test helpers',
];

// Known sections in reading order, then plugins, then any folder added later (alphabetically).
function sectionRank(section: string): number {
  const known = sectionOrder.indexOf(section);
  if (known !== -1) return known;
  return section.startsWith('Plugin: ') ? sectionOrder.length : sectionOrder.length + 1;
}

/** The generated part of docs/api.md: per entry point, per section, each export with its sentence. */
export function renderApiDocs(surface: ReadonlyMap<string, readonly ApiExport[]>): string {
  const parts: string[] = [];
  for (const [entryName, exports] of surface) {
    parts.push(`## \`${entryName}\``, '');
    const sections = new Map<string, ApiExport[]>();
    for (const item of exports) {
      const section = sectionOf(item.declaredIn);
      sections.set(section, [...(sections.get(section) ?? []), item]);
    }
    const ordered = [...sections].sort(
      ([a], [b]) => sectionRank(a) - sectionRank(b) || a.localeCompare(b, 'en'),
    );
    for (const [section, items] of ordered) {
      parts.push(`### ${section}`, '');
      for (const item of items) {
        const summary = item.summary === '' ? '(no doc comment)' : item.summary;
        parts.push(`- \`${item.name}\`${item.kind === 'type' ? ' (type)' : ''}: ${summary}`);
      }
      parts.push('');
    }
  }
  return parts.join('\n');
}

/** The markers around the generated part of docs/api.md. */
export const apiDocsMarkers = {
  start: '<!-- api:start (generated by `npm run api:report` from the doc comments; do not edit by hand) -->',
  end: '<!-- api:end -->',
} as const;
