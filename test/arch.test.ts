import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const src = join(root, 'src');

// Which top-level folder of src/ may import which (architecture.md). Files directly in src/ are the preset.
const allowed: Record<string, readonly string[]> = {
  hooks: [],
  llm: ['hooks'],
  providers: ['llm', 'hooks'],
  session: ['llm', 'hooks'],
  prompt: ['session', 'llm', 'hooks'],
  tools: ['session', 'llm', 'hooks'],
  agent: ['prompt', 'tools', 'session', 'llm', 'hooks'],
  loop: ['agent', 'prompt', 'tools', 'session', 'llm', 'hooks'],
  plugins: ['agent', 'prompt', 'tools', 'session', 'llm', 'hooks'],
  config: ['providers', 'llm', 'hooks'],
  testing: ['providers', 'llm', 'session', 'hooks'],
  // The transcript fold is bundled into the browser: it imports only types from below it.
  transcript: ['session', 'llm', 'hooks'],
};

// Front ends see only the SDK barrels: the public ones, and the internal one that the package never exports
// (and the CLI may start the server, `rein web`, and the terminal UI, `rein chat`).
const publicOnly = new Set(['cli', 'server', 'tui', 'acp']);
const publicBarrels = new Set(['index.ts', 'testing/index.ts', 'internal.ts']);
// Two dependency-free leaves keep the CLI's start-up path small: package-root.ts (where the package is
// installed: its version, the built Web UI) and harness-error.ts (the base error class alone).
const frontEndExtras: Record<string, readonly string[]> = {
  cli: ['server/index.ts', 'tui/index.ts', 'acp/index.ts', 'package-root.ts', 'harness-error.ts'],
  server: ['package-root.ts'],
};

function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|tsx)$/.test(name)) files.push(path);
  }
  return files;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers: string[] = [];
  const pattern =
    /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;
  for (const match of text.matchAll(pattern)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    if (specifier !== undefined) specifiers.push(specifier);
  }
  return specifiers;
}

function folderOf(path: string): string {
  const rel = relative(src, path);
  return rel.includes(sep) ? rel.split(sep)[0]! : '.';
}

describe('architecture: import rules', () => {
  const files = sourceFiles(src);

  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  for (const file of files) {
    const from = folderOf(file);
    if (from === '.') continue;
    it(`${relative(root, file)} imports only what its folder may`, () => {
      const violations: string[] = [];
      for (const specifier of importsOf(file)) {
        if (!specifier.startsWith('.')) continue;
        const target = resolve(dirname(file), specifier);
        const rel = relative(src, target);
        if (rel.startsWith('..')) {
          violations.push(`${specifier} leaves src/`);
          continue;
        }
        const to = folderOf(target);
        if (to === from) continue;
        if (publicOnly.has(from)) {
          const imported = rel.split(sep).join('/');
          if (!publicBarrels.has(imported) && !(frontEndExtras[from] ?? []).includes(imported))
            violations.push(`${specifier} (front ends import only the public SDK)`);
          continue;
        }
        const rules = allowed[from];
        if (rules === undefined) {
          violations.push(`folder ${from}/ has no import rule`);
          continue;
        }
        if (to === '.' || !rules.includes(to)) violations.push(`${specifier} (${from} → ${to})`);
      }
      expect(violations).toEqual([]);
    });
  }

  it('plugins never import the loop', () => {
    expect(allowed.plugins).not.toContain('loop');
  });
});
