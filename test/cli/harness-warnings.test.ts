// One typed list of warnings on the application harness (sandbox fallback, config problems), and how the
// front ends print it: text on stderr, and `--json` notices that carry the code and source.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReinHarness } from '../../src/index.ts';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox } from './rein-process.ts';

let box: Sandbox;

beforeEach(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  mkdirSync(box.home, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Warnings\n');
});

afterEach(() => box.cleanup());

describe('ReinHarness.warnings', () => {
  it('lists the sandbox fallback first, then each unknown config key, each with a code and a source', async () => {
    writeFileSync(join(box.home, 'config.json'), JSON.stringify({ defaultModle: 'x/y', extra: 1 }));
    const harness = await createReinHarness({
      home: box.home,
      cwd: box.workspace,
      approve: 'sandbox',
      env: { REIN_BWRAP: join(box.root, 'no-such-bwrap') },
    });
    try {
      expect(harness.approvalMode).toBe('ask');
      expect(harness.warnings.map(({ code, source, loud }) => ({ code, source, loud }))).toEqual([
        { code: 'SANDBOX_UNAVAILABLE', source: 'sandbox', loud: true },
        { code: 'CONFIG_UNKNOWN_KEY', source: 'config', loud: false },
        { code: 'CONFIG_UNKNOWN_KEY', source: 'config', loud: false },
      ]);
      expect(harness.warnings[1]!.message).toContain(
        "unknown key 'defaultModle' (did you mean 'defaultModel'?)",
      );
      expect(harness.warnings[2]!.message).toContain("unknown key 'extra'");
    } finally {
      await harness.dispose();
    }
  });

  it('a broken config tolerated by a read-only command is one CONFIG_IGNORED warning', async () => {
    writeFileSync(join(box.home, 'config.json'), '{oops');
    const harness = await createReinHarness({
      home: box.home,
      cwd: box.workspace,
      env: {},
      tolerateBrokenConfig: true,
    });
    try {
      expect(harness.warnings).toHaveLength(1);
      expect(harness.warnings[0]).toMatchObject({ code: 'CONFIG_IGNORED', source: 'config', loud: false });
      expect(harness.warnings[0]!.message).toContain('it is ignored for this command');
    } finally {
      await harness.dispose();
    }
  });

  it('a clean composition has no warnings', async () => {
    const harness = await createReinHarness({ home: box.home, cwd: box.workspace, env: {} });
    try {
      expect(harness.warnings).toEqual([]);
    } finally {
      await harness.dispose();
    }
  });
});

describe('rein run prints the warnings', () => {
  const config = JSON.stringify({ defaultModle: 'x/y' });
  const args = ['run', '--model', 'demo/running-example', '--approve', 'sandbox'];
  const env = (): Record<string, string> => ({ ...box.env, REIN_BWRAP: join(box.root, 'no-such-bwrap') });

  it('in text: the sandbox fallback in capitals, the config key as a warning, on stderr', async () => {
    writeFileSync(join(box.home, 'config.json'), config);
    const result = await runRein([...args, 'hi'], { cwd: box.workspace, env: env(), input: '' });
    const lines = result.stderr.split('\n');
    const loud = lines.findIndex((line) =>
      line.startsWith('WARNING: the sandbox approval mode is not available:'),
    );
    const key = lines.findIndex(
      (line) => line.startsWith('warning: ') && line.includes("unknown key 'defaultModle'"),
    );
    expect(loud).toBeGreaterThanOrEqual(0);
    expect(key).toBeGreaterThan(loud);
  }, 120_000);

  it('in --json: notices with the same text plus code and source', async () => {
    writeFileSync(join(box.home, 'config.json'), config);
    const result = await runRein([...args, '--json', 'hi'], { cwd: box.workspace, env: env(), input: '' });
    const notices = parseJsonLines(result.stdout)
      .live.filter((line) => line.type === 'notice')
      .map((line) => line.data as { message: string; code?: string; source?: string });
    const warnings = notices.filter((notice) => notice.code !== undefined);
    expect(warnings.map(({ code, source }) => ({ code, source }))).toEqual([
      { code: 'SANDBOX_UNAVAILABLE', source: 'sandbox' },
      { code: 'CONFIG_UNKNOWN_KEY', source: 'config' },
    ]);
    expect(warnings[0]!.message).toMatch(/^WARNING: the sandbox approval mode is not available:/);
    expect(warnings[1]!.message).toMatch(/^warning: .*unknown key 'defaultModle'/);
  }, 120_000);
});
