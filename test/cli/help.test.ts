import { describe, expect, it } from 'vitest';
import { commandSpecs } from '../../src/cli/command-specs.ts';
import type { CliIo } from '../../src/cli/cli-io.ts';
import { runCli } from '../../src/cli/main.ts';
import { runRein } from './rein-process.ts';

function captureIo(): CliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdin: process.stdin,
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    env: {},
    cwd: process.cwd(),
    out: () => out,
    err: () => err,
  };
}

describe('help', () => {
  it('rein --help (the real binary) lists every command', async () => {
    const result = await runRein(['--help'], { cwd: process.cwd() });
    expect(result.code).toBe(0);
    for (const spec of commandSpecs)
      expect(result.stdout).toMatch(new RegExp(`^  ${spec.name} +${spec.summary.slice(0, 20)}`, 'm'));
    expect(result.stdout).toContain('Examples:');
  }, 120_000);

  for (const spec of commandSpecs) {
    it(`rein ${spec.name} --help lists every option with an example`, async () => {
      const io = captureIo();
      expect(await runCli([spec.name, '--help'], io)).toBe(0);
      const text = io.out();
      expect(text).toContain(`rein ${spec.name} — ${spec.summary}`);
      for (const option of spec.options) {
        expect(text).toContain(
          `--${option.name}${option.type === 'string' ? ` <${option.value ?? 'value'}>` : ''}`,
        );
        expect(text).toContain(option.description);
      }
      expect(text).toContain('--help');
      expect(text).toMatch(/Examples:\n {2}rein/);
      expect(io.err()).toBe('');
    });
  }

  it('rein help <command> is the same as rein <command> --help; an unknown topic is a usage error', async () => {
    const a = captureIo();
    const b = captureIo();
    await runCli(['help', 'run'], a);
    await runCli(['run', '--help'], b);
    expect(a.out()).toBe(b.out());
    const bad = captureIo();
    expect(await runCli(['help', 'nope'], bad)).toBe(2);
    expect(bad.err()).toMatch(/^rein: unknown command 'nope'\nUsage: rein \[command\]/);
  });
});
