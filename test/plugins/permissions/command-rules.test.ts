import { describe, expect, it } from 'vitest';
import type { CallFacts, PermissionMode, PermissionRule } from '../../../src/internal.ts';
import { evaluatePermission } from '../../../src/internal.ts';

const facts = (command: string): CallFacts => ({
  tool: 'bash',
  effect: 'execute',
  command,
  paths: [{ requested: '.', real: '/ws', zone: 'inside', display: '.' }],
});

const rules: PermissionRule[] = [
  { decision: 'deny', tool: 'bash', command: 'rm*' },
  { decision: 'deny', tool: 'bash', command: 'curl*' },
  { decision: 'allow', tool: 'bash', command: 'git status*' },
  { decision: 'allow', tool: 'bash', command: 'ls*' },
  { decision: 'allow', tool: 'bash', command: 'echo*' },
  { decision: 'allow', tool: 'bash', command: 'find*' },
  { decision: 'allow', tool: 'bash', command: 'xargs*' },
  { decision: 'allow', tool: 'bash', command: 'rm*' },
];

const decide = (command: string, mode: PermissionMode) =>
  evaluatePermission(facts(command), { mode, rules, sessionApprovals: new Set() }).decision;

// [command line, decision in yolo mode (where only rules can stop a call), decision in ask mode]
const table: [string, 'allow' | 'deny' | 'ask', 'allow' | 'deny' | 'ask'][] = [
  // Plain forms.
  ['rm -rf x', 'deny', 'deny'],
  ['git status', 'allow', 'allow'],
  ['ls -la && echo done', 'allow', 'allow'],
  ['make build', 'allow', 'ask'],
  // Program paths.
  ['/bin/rm -rf x', 'deny', 'deny'],
  ['/usr/bin/rm x', 'deny', 'deny'],
  ['./rm x', 'deny', 'deny'],
  ['../../bin/rm x', 'deny', 'deny'],
  ['~/bin/rm x', 'deny', 'deny'],
  // Quoting and escapes.
  ['"rm" -rf x', 'deny', 'deny'],
  ["'r'm -rf x", 'deny', 'deny'],
  ['r""m -rf x', 'deny', 'deny'],
  ['\\rm -rf x', 'deny', 'deny'],
  ["$'rm' -rf x", 'deny', 'deny'],
  // Nested shells.
  ['bash -c "rm -rf x"', 'deny', 'deny'],
  ["sh -c 'rm -rf x'", 'deny', 'deny'],
  ["zsh -c 'ls; rm x'", 'deny', 'deny'],
  ["bash -lc 'rm x'", 'deny', 'deny'],
  ["bash -e -c 'rm x'", 'deny', 'deny'],
  ['bash -c "bash -c \'rm -rf x\'"', 'deny', 'deny'],
  ["/bin/sh -c 'git status'", 'allow', 'ask'],
  ['echo rm -rf x | bash', 'ask', 'ask'],
  ['bash -c "$CMD"', 'ask', 'ask'],
  // eval and exec.
  ['eval "rm -rf x"', 'deny', 'deny'],
  ["eval 'ls' '&&' 'rm x'", 'deny', 'deny'],
  ['eval "$CMD"', 'ask', 'ask'],
  ['exec rm x', 'deny', 'deny'],
  ['exec -a foo /bin/rm x', 'deny', 'deny'],
  // xargs and find.
  ['ls | xargs rm', 'deny', 'deny'],
  ['find . -name "*.o" | xargs -0 -n 1 rm -f', 'deny', 'deny'],
  ['find . -name "*.o" -exec rm {} \\;', 'deny', 'deny'],
  ['find . -execdir /bin/rm -f {} +', 'deny', 'deny'],
  ['find . -name "*.tmp" -delete', 'deny', 'deny'],
  ['find . -name "*.ts"', 'allow', 'allow'],
  ['find . -exec cat {} \\;', 'allow', 'ask'],
  // Wrappers.
  ['env rm x', 'deny', 'deny'],
  ['env -i PATH=/bin FOO=1 rm x', 'deny', 'deny'],
  ["env -S 'rm -rf x'", 'deny', 'deny'],
  ['nice -n 10 rm x', 'deny', 'deny'],
  ['timeout -s KILL 10 rm x', 'deny', 'deny'],
  ['nohup rm x &', 'deny', 'deny'],
  ['sudo -u root rm x', 'deny', 'deny'],
  ["sudo -s 'rm x'", 'deny', 'deny'],
  ['command rm x', 'deny', 'deny'],
  ['builtin eval "rm x"', 'deny', 'deny'],
  ['time rm x', 'deny', 'deny'],
  ['stdbuf -oL rm x', 'deny', 'deny'],
  ['ionice -c 3 rm x', 'deny', 'deny'],
  ['setsid -f rm x', 'deny', 'deny'],
  ['FOO=1 BAR=2 rm x', 'deny', 'deny'],
  ['env FOO=1 nice timeout 5 sudo /bin/rm x', 'deny', 'deny'],
  // Substitutions, subshells, pipelines and lists.
  ['echo $(rm -rf x)', 'deny', 'deny'],
  ['echo `rm -rf x`', 'deny', 'deny'],
  ['echo "$(curl evil.example)"', 'deny', 'deny'],
  ['(cd src && rm x)', 'deny', 'deny'],
  ['{ ls; rm x; }', 'deny', 'deny'],
  ['ls | rm x', 'deny', 'deny'],
  ['ls || rm x', 'deny', 'deny'],
  ['ls; rm x', 'deny', 'deny'],
  ['ls\nrm x', 'deny', 'deny'],
  ['if true; then rm x; fi', 'deny', 'deny'],
  ['trap "rm x" EXIT', 'deny', 'deny'],
  // Undecidable: treated as matching a deny, unknown to an allow: it asks.
  ['$PROGRAM -rf x', 'ask', 'ask'],
  ['${RM:-rm} x', 'ask', 'ask'],
  ['"$(which rm)" -rf x', 'ask', 'ask'],
  ['/bin/r? -rf x', 'ask', 'ask'],
  ['echo "unterminated', 'ask', 'ask'],
  ['cat <<EOF\nhi\nEOF', 'ask', 'ask'],
  ['sudo -s', 'ask', 'ask'],
  // Commands that only mention rm run.
  ['echo rm -rf x', 'allow', 'allow'],
  ['git status -- rm', 'allow', 'allow'],
  ['command -v rm', 'allow', 'ask'],
];

describe('command rules see through the shell', () => {
  it('holds at least 40 command lines', () => {
    expect(table.length).toBeGreaterThanOrEqual(40);
  });

  for (const [command, inYolo, inAsk] of table) {
    it(`${JSON.stringify(command)}: ${inYolo} in yolo, ${inAsk} in ask`, () => {
      const yolo = decide(command, 'yolo');
      const ask = decide(command, 'ask');
      expect(yolo.kind).toBe(inYolo);
      expect(ask.kind).toBe(inAsk);
      if (inYolo === 'ask') expect(yolo.kind === 'ask' && yolo.reason).toMatch(/cannot tell what it runs/);
    });
  }

  it('deny wins over any allow: rm is allowed and denied, and denied it is', () => {
    expect(decide('rm x', 'ask').kind).toBe('deny');
  });

  it('without deny rules an undecidable line is only unknown to allow rules', () => {
    const onlyAllow = rules.filter((rule) => rule.decision === 'allow');
    const decision = (command: string, mode: PermissionMode) =>
      evaluatePermission(facts(command), { mode, rules: onlyAllow, sessionApprovals: new Set() }).decision
        .kind;
    expect(decision('$PROGRAM x', 'yolo')).toBe('allow');
    expect(decision('$PROGRAM x', 'ask')).toBe('ask');
    expect(decision('ls $DIR', 'ask')).toBe('allow');
  });
});
