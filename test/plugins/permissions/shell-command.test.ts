import { describe, expect, it } from 'vitest';
import type { CallFacts } from '../../../src/internal.ts';
import { evaluatePermission, parseShellCommand, permissionsPlugin } from '../../../src/internal.ts';

const raws = (command: string) => parseShellCommand(command).parts.map((part) => part.raw);

describe('parseShellCommand', () => {
  it('splits on every operator and finds nested commands', () => {
    expect(raws('git status && npm test || echo failed; ls | wc -l & sleep 1')).toEqual([
      'git status',
      'npm test',
      'echo failed',
      'ls',
      'wc -l',
      'sleep 1',
    ]);
    expect(raws('(cd src && make) 2>&1')).toEqual(['cd src', 'make']);
    expect(parseShellCommand('(make) > log.txt').parts.map((part) => part.writesFile)).toEqual([false, true]);
    expect(raws('echo "today: $(date +%F)" `whoami`')).toEqual([
      'date +%F',
      'whoami',
      'echo "today: $(date +%F)" `whoami`',
    ]);
    expect(raws('diff <(sort a) <(sort b)')).toEqual(['sort a', 'sort b', 'diff <(sort a) <(sort b)']);
  });

  it('keeps operators inside quotes and escapes as text', () => {
    expect(raws(`echo 'a && b' "c; d" e\\;f`)).toEqual([`echo 'a && b' "c; d" e\\;f`]);
    expect(parseShellCommand(`echo "unterminated`).complete).toBe(false);
    expect(parseShellCommand('echo $(unclosed').complete).toBe(false);
  });

  it('marks file redirections, here-documents, loops and opaque shells', () => {
    const [redirect, quiet, dup] = parseShellCommand(
      'echo a > out.txt; echo b > /dev/null; echo c 2>&1',
    ).parts;
    expect([redirect!.writesFile, quiet!.writesFile, dup!.writesFile]).toEqual([true, false, false]);
    expect(parseShellCommand('cat <<EOF\nhi\nEOF').complete).toBe(false);
    expect(parseShellCommand('for f in *; do rm $f; done').complete).toBe(false);
    expect(raws('if git diff --quiet; then echo clean; else rm -rf x; fi')).toEqual([
      'git diff --quiet',
      'echo clean',
      'rm -rf x',
    ]);
    expect(parseShellCommand(`bash -c 'rm -rf /'`).parts[0]!.opaque).toBe(true);
    expect(parseShellCommand(`eval "$CMD"`).parts[0]!.opaque).toBe(true);
  });
});

describe('command rules', () => {
  const facts = (command: string): CallFacts => ({
    tool: 'bash',
    effect: 'execute',
    command,
    paths: [{ requested: '.', real: '/ws', zone: 'inside', display: '.' }],
  });
  const decide = (command: string) =>
    evaluatePermission(facts(command), {
      mode: 'ask',
      rules: [
        { decision: 'allow', tool: 'bash', command: 'git status*' },
        { decision: 'allow', tool: 'bash', command: 'npm test' },
        { decision: 'allow', tool: 'bash', command: 'rm*' },
        { decision: 'deny', tool: 'bash', command: 'rm -rf*' },
      ],
      sessionApprovals: new Set(),
    }).decision.kind;

  it('matches prefixes and exact commands, and deny sees through quotes, wrappers and assignments', () => {
    expect(decide('git status')).toBe('allow');
    expect(decide('git status --short')).toBe('allow');
    expect(decide('npm test')).toBe('allow');
    expect(decide('npm test -- --watch')).toBe('ask');
    expect(decide('git status && npm test')).toBe('allow');
    expect(decide('git status && git push')).toBe('ask');
    expect(decide('rm a.txt')).toBe('allow');
    expect(decide('rm -rf build')).toBe('deny');
    expect(decide('"rm" -rf build')).toBe('deny');
    expect(decide('sudo rm -rf build')).toBe('deny');
    expect(decide('FOO=1 rm -rf build')).toBe('deny');
    expect(decide('git status; (cd x && rm -rf .)')).toBe('deny');
    expect(decide('git status > status.txt')).toBe('ask');
    expect(decide(`bash -c 'git status'`)).toBe('ask');
  });
});

describe('permissionsPlugin options', () => {
  it('rejects an unknown mode or a rule without a decision with a typed error', () => {
    expect(() => permissionsPlugin({ mode: 'careful' as never, workspace: '.' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() =>
      permissionsPlugin({
        mode: 'ask',
        workspace: '.',
        rules: [{ decision: 'maybe' as never, tool: 'bash' }],
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
});
