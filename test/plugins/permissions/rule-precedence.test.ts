import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CallFacts, PermissionMode, PermissionRule } from '../../../src/internal.ts';
import {
  evaluatePermission,
  parseShellCommand,
  permissionModes,
  sessionApprovalKey,
} from '../../../src/internal.ts';

const root = '/work/space';
const commands = [
  'git status',
  'git push origin main',
  'npm test',
  'ls -la',
  'rm -rf build',
  'echo hi',
  'cat a.txt',
  'curl example.com',
];
// Every mode, `sandbox` included: rules must win over what a mode would let run.
const modes: readonly PermissionMode[] = permissionModes;

/** A compound command: simple commands joined by operators and nested in subshells and substitutions. */
const compound: fc.Arbitrary<{ text: string; parts: string[] }> = fc.letrec<{
  node: { text: string; parts: string[] };
}>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...commands).map((command) => ({ text: command, parts: [command] })),
    fc
      .tuple(tie('node'), fc.constantFrom(' && ', ' || ', '; ', ' | ', ' & ', '\n', ' |& '), tie('node'))
      .map(([left, operator, right]) => ({
        text: `${left.text}${operator}${right.text}`,
        parts: [...left.parts, ...right.parts],
      })),
    tie('node').map((inner) => ({ text: `(${inner.text})`, parts: inner.parts })),
    tie('node').map((inner) => ({
      text: `echo $(${inner.text})`,
      parts: [`echo $(${inner.text})`, ...inner.parts],
    })),
    // Backticks do not nest without escapes, so they only wrap simple commands.
    fc
      .constantFrom(...commands)
      .map((command) => ({ text: `echo \`${command}\``, parts: [`echo \`${command}\``, command] })),
  ),
})).node;

const rule: fc.Arbitrary<PermissionRule> = fc.record(
  {
    decision: fc.constantFrom('allow' as const, 'deny' as const),
    tool: fc.constantFrom('bash', 'write_file', '*'),
    command: fc.constantFrom(...commands, 'git*', 'npm*', '*', 'rm*', 'echo*'),
    path: fc.constantFrom('src/**', '**', '/etc/**'),
  },
  { requiredKeys: ['decision'] },
);

/** A bash call; every other one runs in the OS sandbox, so `sandbox` mode's own allowance is exercised. */
let bashCalls = 0;
function bashFacts(command: string): CallFacts {
  bashCalls += 1;
  return {
    tool: 'bash',
    effect: 'execute',
    command,
    paths: [{ requested: '.', real: root, zone: 'inside', display: '.' }],
    ...(bashCalls % 2 === 0 ? { confinement: { sandboxed: true, network: false } } : {}),
  };
}

function writeFacts(path: string): CallFacts {
  return {
    tool: 'write_file',
    effect: 'write',
    paths: [{ requested: path, real: `${root}/${path}`, zone: 'inside', display: path }],
  };
}

describe('rule precedence (property tests)', () => {
  it('the parser finds every simple command of a compound line', () => {
    fc.assert(
      fc.property(compound, (line) => {
        const parsed = parseShellCommand(line.text);
        expect(parsed.complete).toBe(true);
        const found = parsed.parts.map((part) => part.raw);
        for (const part of line.parts) expect(found).toContain(part);
      }),
      { numRuns: 300 },
    );
  });

  it('deny always wins: a deny rule for the tool beats any allow rule, mode or session approval', () => {
    fc.assert(
      fc.property(
        fc.array(rule, { maxLength: 8 }),
        fc.constantFrom(...modes),
        fc.oneof(
          compound.map((line) => bashFacts(line.text)),
          fc.constantFrom('a.txt', 'src/x.ts').map(writeFacts),
        ),
        fc.nat(),
        (rules, mode, facts, position) => {
          const deny: PermissionRule = { decision: 'deny', tool: facts.tool };
          const all = [...rules];
          all.splice(position % (all.length + 1), 0, deny);
          const verdict = evaluatePermission(facts, {
            mode,
            rules: all,
            sessionApprovals: new Set([sessionApprovalKey(facts)]),
          });
          expect(verdict.decision.kind).toBe('deny');
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a compound command is never allowed when one of its parts is denied, wherever that part sits', () => {
    fc.assert(
      fc.property(
        compound,
        fc.array(rule, { maxLength: 8 }),
        fc.constantFrom(...modes),
        fc.nat(),
        fc.boolean(),
        (line, rules, mode, pick, asPrefix) => {
          const part = line.parts[pick % line.parts.length]!;
          const deny: PermissionRule = {
            decision: 'deny',
            tool: 'bash',
            command: asPrefix ? `${part.split(' ')[0]!}*` : part,
          };
          const everything: PermissionRule[] = [
            { decision: 'allow', tool: 'bash' },
            { decision: 'allow', tool: 'bash', command: '*' },
          ];
          const facts = bashFacts(line.text);
          const verdict = evaluatePermission(facts, {
            mode,
            rules: [...everything, ...rules, deny],
            sessionApprovals: new Set([sessionApprovalKey(facts)]),
          });
          expect(verdict.decision.kind).toBe('deny');
        },
      ),
      { numRuns: 400 },
    );
  });

  it('allow rules let a compound command run only when they cover every part', () => {
    fc.assert(
      fc.property(compound, fc.nat(), (line, skip) => {
        const distinct = [...new Set(line.parts)];
        const allowAll: PermissionRule[] = distinct.map((part) => ({
          decision: 'allow',
          tool: 'bash',
          command: part,
        }));
        const facts = bashFacts(line.text);
        const config = { mode: 'ask' as const, sessionApprovals: new Set<string>() };
        expect(evaluatePermission(facts, { ...config, rules: allowAll }).decision.kind).toBe('allow');
        const missing = distinct[skip % distinct.length]!;
        const partial = allowAll.filter((allow) => allow.command !== missing);
        expect(evaluatePermission(facts, { ...config, rules: partial }).decision.kind).toBe('ask');
      }),
      { numRuns: 300 },
    );
  });

  it('the order of rules never changes the decision', () => {
    fc.assert(
      fc.property(
        fc.array(rule, { maxLength: 8 }),
        fc.constantFrom(...modes),
        compound,
        fc.func(fc.integer()),
        (rules, mode, line, order) => {
          const facts = bashFacts(line.text);
          const shuffled = rules
            .map((item, index) => ({ item, key: order(index) }))
            .sort((a, b) => a.key - b.key)
            .map(({ item }) => item);
          const config = { mode, sessionApprovals: new Set<string>() };
          expect(evaluatePermission(facts, { ...config, rules: shuffled }).decision.kind).toBe(
            evaluatePermission(facts, { ...config, rules }).decision.kind,
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
