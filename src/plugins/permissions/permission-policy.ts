import { homedir } from 'node:os';
import { join } from 'node:path';
import type PicomatchModule from 'picomatch';
import { lazyModule } from '../../llm/lazy-module.ts';
import type { PreToolDecision, ToolConfinement, ToolEffect } from '../../tools/index.ts';
import type { PathZone } from '../../tools/builtin/index.ts';
import type { ShellPart } from './shell-command.ts';
import { parseShellCommand } from './shell-command.ts';

const picomatch = lazyModule<typeof PicomatchModule>('picomatch');

/**
 * How much runs without asking: `ask` (reads inside the workspace run; the rest asks), `auto-edit`
 * (edits inside the workspace run too), `sandbox` (like `auto-edit`, and commands the OS sandbox
 * confines run too; whatever would leave the sandbox asks), `yolo` (everything runs) and `read-only`
 * (mutations are denied).
 */
export type PermissionMode = 'ask' | 'auto-edit' | 'sandbox' | 'yolo' | 'read-only';

/** The permission modes, for validation and UIs. */
export const permissionModes: readonly PermissionMode[] = [
  'ask',
  'auto-edit',
  'sandbox',
  'yolo',
  'read-only',
];

/**
 * An allow or deny rule. `tool` names the tool (`*` wildcards; any tool when omitted); `command` is a
 * pattern over each simple command of a shell line (`git status*`: a prefix; no `*`: exact); `path` is
 * a glob over the call's paths (relative to the workspace, or absolute when it starts with `/` or `~`).
 * A rule applies when every field it sets matches. Deny wins over allow.
 */
export interface PermissionRule {
  readonly decision: 'allow' | 'deny';
  readonly tool?: string;
  readonly command?: string;
  readonly path?: string;
  /** Told to the model when a deny rule refuses a call. */
  readonly reason?: string;
}

/** One path a call touches, resolved against the workspace. */
export interface PathFact {
  readonly requested: string;
  /** Canonical path; undefined when the path could not be resolved. */
  readonly real?: string;
  readonly zone?: PathZone;
  /** The path relative to the workspace when inside, else the canonical path. */
  readonly display?: string;
  /** Why the path is unusable, when it is. */
  readonly invalid?: string;
  /** The link count of a regular file with more than one hard link (another name may lie outside). */
  readonly hardLinks?: number;
}

/** What the policy knows about a call: read from the tool's declared properties, never its name. */
export interface CallFacts {
  readonly tool: string;
  readonly effect: ToolEffect;
  readonly command?: string;
  readonly paths: readonly PathFact[];
  /** How the OS would confine the call, when the tool declares it. */
  readonly confinement?: ToolConfinement;
}

/** The policy's verdict, with the outside paths a permitted call may then touch. */
export interface PermissionVerdict {
  readonly decision: PreToolDecision;
  /** Canonical outside paths to grant the call once it is allowed to run. */
  readonly grant: { read: string[]; write: string[] };
}

/** What the policy decides with. */
export interface PolicyConfig {
  readonly mode: PermissionMode;
  readonly rules: readonly PermissionRule[];
  /** Keys of calls a human allowed for the rest of the session (see `sessionApprovalKey`). */
  readonly sessionApprovals: ReadonlySet<string>;
}

/** The key of an `allow-session` approval: the tool, its command and its canonical paths. */
export function sessionApprovalKey(facts: CallFacts): string {
  const paths = facts.paths.map((path) => path.real ?? path.requested).sort();
  const confinement =
    facts.confinement === undefined ? [] : [facts.confinement.sandboxed, facts.confinement.network];
  return JSON.stringify([facts.tool, facts.command ?? null, paths, ...confinement]);
}

function wildcard(pattern: string): RegExp {
  const escaped = pattern
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '[\\s\\S]*');
  return new RegExp(`^${escaped}$`);
}

const matcherCache = new Map<string, RegExp>();
function wildcardMatches(pattern: string, text: string): boolean {
  let regex = matcherCache.get(pattern);
  if (regex === undefined) {
    regex = wildcard(pattern);
    matcherCache.set(pattern, regex);
  }
  // Whitespace runs count as one space on both sides, as in the pattern.
  return regex.test(text.trim().replace(/\s+/g, ' '));
}

function toolMatches(rule: PermissionRule, tool: string): boolean {
  return rule.tool === undefined || wildcardMatches(rule.tool, tool);
}

function pathMatches(pattern: string, path: PathFact): boolean {
  if (path.real === undefined) return false;
  if (pattern.startsWith('/') || pattern.startsWith('~')) {
    const absolute =
      pattern === '~' ? homedir() : pattern.startsWith('~/') ? join(homedir(), pattern.slice(2)) : pattern;
    return picomatch().isMatch(path.real, absolute, { dot: true });
  }
  if (path.zone === 'outside' || path.display === undefined || path.display.startsWith('/')) return false;
  return (
    picomatch().isMatch(path.display, pattern, { dot: true }) || (path.display === '.' && pattern === '**')
  );
}

// A deny pattern matches a part in any of its spellings: as written, unquoted, wrappers peeled, paths cut.
function denyMatchesPart(pattern: string, part: ShellPart): boolean {
  const spellings = new Set([part.raw, part.plain, ...part.spellings]);
  for (const spelling of spellings) if (wildcardMatches(pattern, spelling)) return true;
  return false;
}

function denyRuleApplies(rule: PermissionRule, facts: CallFacts, parts: readonly ShellPart[]): boolean {
  if (!toolMatches(rule, facts.tool)) return false;
  if (rule.command !== undefined) {
    if (facts.command === undefined) return false;
    const pattern = rule.command;
    if (
      !wildcardMatches(pattern, facts.command.trim()) &&
      !parts.some((part) => denyMatchesPart(pattern, part))
    )
      return false;
  }
  if (rule.path !== undefined) {
    const pattern = rule.path;
    if (!facts.paths.some((path) => pathMatches(pattern, path))) return false;
  }
  return true;
}

function accessOf(effect: ToolEffect): 'read' | 'write' {
  return effect === 'write' || effect === 'other' ? 'write' : 'read';
}

function isOutsideRead(path: PathFact): boolean {
  return path.zone === 'outside' || path.zone === 'rein-home';
}

function pathCoveredByRule(rules: readonly PermissionRule[], path: PathFact): boolean {
  return rules.some(
    (rule) => rule.command === undefined && rule.path !== undefined && pathMatches(rule.path, path),
  );
}

// Allow rules cover a call when one covers the whole tool, or the command (every part) and every path are covered.
function coveredByAllowRules(
  rules: readonly PermissionRule[],
  facts: CallFacts,
  complete: boolean,
  parts: readonly ShellPart[],
): boolean {
  const relevant = rules.filter((rule) => rule.decision === 'allow' && toolMatches(rule, facts.tool));
  if (relevant.some((rule) => rule.command === undefined && rule.path === undefined)) return true;
  if (facts.command !== undefined) {
    if (!complete || parts.length === 0) return false;
    const commandRules = relevant.filter((rule) => rule.command !== undefined && rule.path === undefined);
    const everyPart = parts.every(
      (part) =>
        !part.opaque &&
        !part.writesFile &&
        part.undecidable === undefined &&
        commandRules.some((rule) => wildcardMatches(rule.command!, part.raw)),
    );
    if (!everyPart) return false;
    return facts.paths.every((path) => path.zone === 'inside' || pathCoveredByRule(relevant, path));
  }
  return facts.paths.length > 0 && facts.paths.every((path) => pathCoveredByRule(relevant, path));
}

// Why some command of a parsed line cannot be known before it runs (undefined when all can be).
function undecidedPart(parsed: { parts: readonly ShellPart[]; complete: boolean }): string | undefined {
  const part = parsed.parts.find((candidate) => candidate.undecidable !== undefined);
  if (part !== undefined) return part.undecidable;
  return parsed.complete ? undefined : 'the line uses shell syntax the rule matcher does not follow';
}

function describeCall(facts: CallFacts): string {
  if (facts.command !== undefined) return `${facts.tool} runs \`${facts.command}\``;
  const paths = facts.paths.map((path) => path.display ?? path.requested).join(', ');
  return paths === '' ? `${facts.tool} was called` : `${facts.tool} touches ${paths}`;
}

/**
 * Decides one call: deny rules first (deny always wins), then the protections (`.git/` internals,
 * Rein's home and saved output are never written; writing outside the workspace needs an explicit allow
 * rule), then allow rules and the session's approvals, then the mode's default.
 */
export function evaluatePermission(facts: CallFacts, config: PolicyConfig): PermissionVerdict {
  const grant: { read: string[]; write: string[] } = { read: [], write: [] };
  const verdict = (decision: PreToolDecision): PermissionVerdict => ({ decision, grant });
  const invalid = facts.paths.find((path) => path.invalid !== undefined);
  if (invalid !== undefined) {
    return verdict({
      kind: 'deny',
      reason: `${facts.tool}: invalid path ${JSON.stringify(invalid.requested)}: ${invalid.invalid ?? ''}`,
    });
  }
  const parsed =
    facts.command !== undefined ? parseShellCommand(facts.command) : { parts: [], complete: true };
  for (const rule of config.rules) {
    if (rule.decision === 'deny' && denyRuleApplies(rule, facts, parsed.parts)) {
      return verdict({
        kind: 'deny',
        reason: rule.reason ?? `${describeCall(facts)}, which a deny rule forbids`,
      });
    }
  }
  // What the analysis cannot see through counts as matching a deny rule, so a human decides.
  const unknown = facts.command === undefined ? undefined : undecidedPart(parsed);
  if (unknown !== undefined) {
    const rule = config.rules.find(
      (candidate) =>
        candidate.decision === 'deny' &&
        candidate.command !== undefined &&
        toolMatches(candidate, facts.tool) &&
        (candidate.path === undefined || facts.paths.some((path) => pathMatches(candidate.path!, path))),
    );
    if (rule !== undefined) {
      return verdict({
        kind: 'ask',
        reason: `${describeCall(facts)}; Rein cannot tell what it runs (${unknown}), so the deny rule ${JSON.stringify(rule.command)} might apply`,
      });
    }
  }
  const access = accessOf(facts.effect);
  const ruleAllowed = coveredByAllowRules(config.rules, facts, parsed.complete, parsed.parts);
  if (access === 'write') {
    const protectedPath = facts.paths.find(
      (path) => path.zone === 'git-internals' || path.zone === 'rein-home' || path.zone === 'tool-output',
    );
    if (protectedPath !== undefined) {
      return verdict({
        kind: 'deny',
        reason: `${facts.tool} may not change ${protectedPath.display ?? protectedPath.requested}: it is protected`,
      });
    }
    const outside = facts.paths.filter((path) => path.zone === 'outside');
    const relevant = config.rules.filter(
      (rule) => rule.decision === 'allow' && toolMatches(rule, facts.tool),
    );
    const uncovered = outside.find((path) => !pathCoveredByRule(relevant, path));
    if (uncovered !== undefined) {
      return verdict({
        kind: 'deny',
        reason: `${facts.tool} may not write ${uncovered.real ?? uncovered.requested}: it is outside the workspace and no allow rule permits it`,
      });
    }
    grant.write.push(...outside.map((path) => path.real!));
  } else {
    grant.read.push(...facts.paths.filter(isOutsideRead).map((path) => path.real!));
  }
  const shared = facts.paths.filter((path) => path.hardLinks !== undefined && path.real !== undefined);
  (access === 'write' ? grant.write : grant.read).push(...shared.map((path) => path.real!));
  if (ruleAllowed || config.sessionApprovals.has(sessionApprovalKey(facts)))
    return verdict({ kind: 'allow' });
  if (shared.length > 0 && config.mode !== 'yolo' && !(config.mode === 'read-only' && access === 'write')) {
    const first = shared[0]!;
    return verdict({
      kind: 'ask',
      reason:
        `${describeCall(facts)}; ${first.display ?? first.requested} has ${first.hardLinks} hard links, ` +
        `so another of its names may lie outside the workspace`,
    });
  }
  const outsideRead = access === 'read' && facts.paths.some(isOutsideRead);
  const readAsk = (): PermissionVerdict =>
    verdict({ kind: 'ask', reason: `${describeCall(facts)}, outside the workspace` });
  switch (config.mode) {
    case 'yolo':
      return verdict({ kind: 'allow' });
    case 'read-only':
      if (facts.effect === 'read') return outsideRead ? readAsk() : verdict({ kind: 'allow' });
      return verdict({
        kind: 'deny',
        reason: `${describeCall(facts)}; the session is read-only, so changes are not allowed`,
      });
    case 'sandbox':
      if (facts.effect === 'read') return outsideRead ? readAsk() : verdict({ kind: 'allow' });
      if (facts.effect === 'write') return verdict({ kind: 'allow' });
      if (facts.confinement?.sandboxed === true && !facts.confinement.network)
        return verdict({ kind: 'allow' });
      return verdict({
        kind: 'ask',
        reason:
          facts.confinement?.sandboxed === true
            ? `${describeCall(facts)} with network access, which the sandbox does not give`
            : facts.confinement !== undefined
              ? `${describeCall(facts)} outside the sandbox`
              : `${describeCall(facts)}; the sandbox does not confine this tool`,
      });
    case 'auto-edit':
      if (facts.effect === 'read') return outsideRead ? readAsk() : verdict({ kind: 'allow' });
      if (facts.effect === 'write') return verdict({ kind: 'allow' });
      return verdict({ kind: 'ask', reason: describeCall(facts) });
    case 'ask':
      if (facts.effect === 'read') return outsideRead ? readAsk() : verdict({ kind: 'allow' });
      return verdict({ kind: 'ask', reason: describeCall(facts) });
  }
}
