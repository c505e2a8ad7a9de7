import { createHash } from 'node:crypto';
import {
  linkSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggedResults, permissionFixture } from '../plugins/permissions/support.ts';
import type { Sandbox } from './support.ts';
import { run, sandbox, textOf, toolsOf } from './support.ts';

// Content that exists only outside the workspace: no result may ever show it.
const marker = 'TOP-SECRET';
const outsideMarkers = [marker, 'root:x:0'];

let box: Sandbox;
let cases: { label: string; path: string; asks?: boolean }[];

/** A fingerprint of everything outside the workspace that a tool could touch. */
function fingerprint(directories: string[]): string {
  const hash = createHash('sha256');
  const visit = (path: string): void => {
    const info = statSync(path, { throwIfNoEntry: false });
    if (info === undefined) return;
    hash.update(`${path}:${info.mode}:${info.size}\n`);
    if (info.isDirectory()) for (const name of readdirSync(path).sort()) visit(join(path, name));
    else hash.update(readFileSync(path));
  };
  for (const directory of directories) visit(directory);
  return hash.digest('hex');
}

beforeAll(() => {
  box = sandbox('rein-escape-');
  const ws = box.workspace;
  const sibling = `${ws}-sibling`;
  mkdirSync(sibling);
  writeFileSync(join(box.outside, 'secret.txt'), `${marker} outside\n`);
  writeFileSync(join(sibling, 'secret.txt'), `${marker} sibling\n`);
  writeFileSync(join(box.reinHome, 'config.json'), `{"apiKey":"${marker}"}\n`);
  writeFileSync(join(box.base, 'secret.txt'), `${marker} base\n`);
  mkdirSync(join(ws, 'sub/deeper'), { recursive: true });
  mkdirSync(join(ws, 'nested'));
  writeFileSync(join(ws, 'inside.txt'), 'harmless\n');
  symlinkSync(join(box.outside, 'secret.txt'), join(ws, 'link-file'));
  symlinkSync(box.outside, join(ws, 'link-dir'));
  symlinkSync('../..', join(ws, 'nested/up'));
  symlinkSync('chain2', join(ws, 'chain1'));
  symlinkSync(join(box.outside, 'secret.txt'), join(ws, 'chain2'));
  symlinkSync('../outside/secret.txt', join(ws, 'rel-link'));
  symlinkSync(join(box.outside, 'planted.txt'), join(ws, 'dangling'));
  symlinkSync(sibling, join(ws, 'sib-link'));
  symlinkSync(box.reinHome, join(ws, 'home-link'));
  symlinkSync('/etc', join(ws, 'etc-link'));
  symlinkSync(join(box.outside), join(ws, 'sub/deeper/escape'));
  const secret = join(box.outside, 'secret.txt');
  linkSync(secret, join(ws, 'hard-secret'));
  linkSync(join(sibling, 'secret.txt'), join(ws, 'sub/hard-deep'));
  symlinkSync(box.outside, join(ws, 'l\u0456nk-dir'));
  symlinkSync(box.outside, join(ws, '\uff4c\uff49\uff4e\uff4b'));
  symlinkSync('link-dir', join(ws, 'link-to-link'));
  symlinkSync('../outside', join(ws, 'rel-dir'));
  cases = [
    { label: 'parent traversal to a file', path: '../outside/secret.txt' },
    { label: 'parent traversal to a directory', path: '../outside' },
    { label: 'parent directory itself', path: '..' },
    { label: 'parent with trailing slash', path: '../' },
    { label: 'two levels up', path: '../../etc/passwd' },
    { label: 'dot then parent', path: './../outside/secret.txt' },
    { label: 'down then up past the root', path: 'sub/../../outside/secret.txt' },
    { label: 'deep down then up past the root', path: 'sub/deeper/../../../outside/secret.txt' },
    { label: 'dots mixed in', path: 'sub/./.././../outside/./secret.txt' },
    { label: 'doubled slashes', path: '..//outside//secret.txt' },
    { label: 'absolute outside file', path: secret },
    { label: 'absolute outside directory', path: box.outside },
    { label: 'absolute through the root', path: `${ws}/../outside/secret.txt` },
    { label: 'absolute /etc/passwd', path: '/etc/passwd' },
    { label: 'absolute /etc', path: '/etc' },
    { label: 'filesystem root', path: '/' },
    { label: 'absolute /root', path: '/root' },
    { label: 'proc environ', path: '/proc/self/environ' },
    { label: 'proc cwd', path: '/proc/self/cwd' },
    { label: 'absolute base directory secret', path: join(box.base, 'secret.txt') },
    { label: 'home directory', path: '~' },
    { label: 'home dotfile', path: '~/.bashrc' },
    { label: 'home then up', path: '~/../../etc/passwd' },
    { label: 'sibling sharing the prefix, absolute', path: join(sibling, 'secret.txt') },
    { label: 'sibling sharing the prefix, relative', path: '../ws-sibling/secret.txt' },
    { label: 'sibling directory sharing the prefix', path: sibling },
    { label: 'symlinked file', path: 'link-file' },
    { label: 'symlinked directory', path: 'link-dir' },
    { label: 'file below a symlinked directory', path: 'link-dir/secret.txt' },
    { label: 'new file below a symlinked directory', path: 'link-dir/new.txt' },
    { label: 'symlinked directory with trailing slash', path: 'link-dir/' },
    { label: 'symlinked parent', path: 'nested/up/outside/secret.txt' },
    { label: 'symlinked parent directory', path: 'nested/up' },
    { label: 'parent of a symlinked directory (kernel semantics)', path: 'link-dir/../secret.txt' },
    { label: 'symlink chain', path: 'chain1' },
    { label: 'relative symlink', path: 'rel-link' },
    { label: 'dangling symlink pointing outside', path: 'dangling' },
    { label: 'symlink to the prefix sibling', path: 'sib-link/secret.txt' },
    { label: 'symlink into Rein home', path: 'home-link/config.json' },
    { label: 'Rein home file', path: join(box.reinHome, 'config.json') },
    { label: 'Rein home directory', path: box.reinHome },
    { label: 'symlink to /etc', path: 'etc-link/passwd' },
    { label: 'deep symlink escaping', path: 'sub/deeper/escape/secret.txt' },
    { label: 'deep symlink then up', path: 'sub/deeper/escape/../secret.txt' },
    { label: 'NUL byte truncation', path: 'inside.txt\0../outside/secret.txt' },
    { label: 'NUL byte alone', path: '\0' },
    { label: 'NUL byte suffix', path: '../outside/secret.txt\0.txt' },
    {
      label: 'very long path over the limit',
      path: `${'a/'.repeat(2500)}${'../'.repeat(2500)}../outside/secret.txt`,
    },
    { label: 'long path under the limit', path: `${'./'.repeat(1500)}../outside/secret.txt` },
    { label: 'long traversal chain', path: `${'sub/../'.repeat(300)}../outside/secret.txt` },
    { label: 'traversal with many parents', path: `${'../'.repeat(40)}etc/passwd` },
    { label: 'symlink then absolute-looking segment', path: 'link-dir//secret.txt' },
    { label: 'hard link to an outside file', path: 'hard-secret', asks: true },
    { label: 'hard link in a subdirectory', path: 'sub/hard-deep', asks: true },
    { label: 'proc root magic link to an outside file', path: `/proc/self/root${secret}` },
    { label: 'proc root magic link to /etc/passwd', path: '/proc/self/root/etc/passwd' },
    { label: 'proc pid root magic link', path: `/proc/${process.pid}/root${secret}` },
    { label: 'proc cwd magic link to a file', path: '/proc/self/cwd/package.json' },
    { label: 'proc fd magic link', path: '/proc/self/fd/0' },
    { label: 'dev stdin', path: '/dev/stdin' },
    { label: 'look-alike (Cyrillic i) symlinked directory', path: 'l\u0456nk-dir/secret.txt' },
    { label: 'look-alike (fullwidth) symlinked directory', path: '\uff4c\uff49\uff4e\uff4b/secret.txt' },
    { label: 'symlink to a symlinked directory', path: 'link-to-link/secret.txt' },
    { label: 'absolute path through a symlinked directory', path: `${ws}/link-dir/secret.txt` },
    { label: 'home then far up to the outside file', path: `~/${'../'.repeat(12)}${secret.slice(1)}` },
    { label: 'symlinked directory with a trailing dot', path: 'link-dir/.' },
    { label: 'relative symlink to an outside directory', path: 'rel-dir/secret.txt' },
  ];
});

afterAll(() => box.cleanup());

const operations = {
  read: (path: string) => ({ name: 'read_file', args: { path } }),
  write: (path: string) => ({ name: 'write_file', args: { path, content: 'PWNED' } }),
  edit: (path: string) => ({ name: 'edit_file', args: { path, old_string: marker, new_string: 'PWNED' } }),
  list: (path: string) => ({ name: 'list_dir', args: { path } }),
  grep: (path: string) => ({ name: 'grep', args: { pattern: `${marker}|root:x:0`, path } }),
  glob: (path: string) => ({ name: 'glob', args: { pattern: '**/*', path, include_ignored: true } }),
} as const;

const watched = (): string[] => [
  box.outside,
  `${box.workspace}-sibling`,
  box.reinHome,
  join(box.base, 'secret.txt'),
];

describe('the path-escape corpus', () => {
  it('holds at least 60 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
  });

  for (const operation of Object.keys(operations) as (keyof typeof operations)[]) {
    it(`${operation}: the tool itself refuses every case, showing no outside content`, async () => {
      const tools = toolsOf(box);
      const before = fingerprint(watched());
      for (const { label, path } of cases) {
        const call = operations[operation](path);
        const result = await run(tools[call.name], call.args);
        const text = textOf(result.output) + (result.error?.message ?? '');
        expect(result.error, `${operation} ${label} must fail`).toBeDefined();
        for (const secret of outsideMarkers) expect(text, `${operation} ${label}`).not.toContain(secret);
      }
      expect(fingerprint(watched())).toBe(before);
    });

    it(`${operation}: through an agent, every case is denied or asked (and the human says no)`, async () => {
      const calls = cases.map(({ path }, index) => ({
        id: `c${index}`,
        name: operations[operation](path).name,
        arguments: operations[operation](path).args,
      }));
      const before = fingerprint(watched());
      const f = await permissionFixture({
        workspace: box.workspace,
        reinHome: box.reinHome,
        // auto-edit lets writes inside the workspace run unasked, so an escaping write can only be refused.
        mode: 'auto-edit',
        responses: [{ toolCalls: calls }],
        approver: () => ({ decision: 'deny', reason: 'not outside the workspace' }),
      });
      f.agent.followup(`${operation} everything`);
      await f.agent.whenIdle();
      const results = loggedResults(f.agent);
      expect(results.map((result) => result.callId)).toEqual(calls.map((call) => call.id));
      const askedFor = new Set(f.asked.map((request) => request.callId));
      for (const [index, result] of results.entries()) {
        const label = cases[index]!.label;
        expect(result.isError, `${operation} ${label}`).toBe(true);
        expect(result.code, `${operation} ${label}`).toBe('TOOL_DENIED');
        if ((operation === 'write' || operation === 'edit') && cases[index]!.asks !== true) {
          expect(askedFor.has(result.callId), `${operation} ${label} is refused without asking`).toBe(false);
        }
        if (cases[index]!.asks === true) {
          expect(askedFor.has(result.callId), `${operation} ${label} asks first`).toBe(true);
        }
        for (const secret of outsideMarkers)
          expect(result.text, `${operation} ${label}`).not.toContain(secret);
      }
      const requests = f.agent.session.events.filter((event) => event.type === 'tool/approval-requested');
      expect(requests.length).toBe(f.asked.length);
      // What the model saw of the results (its own arguments may name the marker; results may not).
      const seen = f.model.requests
        .at(-1)!
        .messages.flatMap((message) => message.content.filter((block) => block.type === 'tool-result'));
      expect(seen).toHaveLength(cases.length);
      for (const secret of outsideMarkers) expect(JSON.stringify(seen)).not.toContain(secret);
      expect(fingerprint(watched())).toBe(before);
      await f.harness.dispose();
    });
  }

  it('walking the workspace never follows a link to outside content', async () => {
    const tools = toolsOf(box);
    const grep = await run(tools.grep, { pattern: `${marker}|root:x:0`, include_ignored: true });
    expect(textOf(grep.output)).toMatch(/^No matches/);
    const glob = await run(tools.glob, { pattern: '**/*', include_ignored: true });
    const [first, ...notes] = textOf(glob.output).split('\n');
    expect(first).toBe('inside.txt');
    expect(notes).toEqual([
      '(skipped 15 symlinks leading outside what this call may read: chain1, chain2, dangling, etc-link, ' +
        'home-link, link-dir, link-file, link-to-link, l\u0456nk-dir, nested/up, rel-dir, rel-link, sib-link, ' +
        'sub/deeper/escape, \uff4c\uff49\uff4e\uff4b)',
      '(skipped 2 hard-linked files (another name may lie outside the workspace): hard-secret, sub/hard-deep)',
    ]);
  });
});
