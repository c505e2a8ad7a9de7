import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { livingGroupMembers, sandboxStatus } from '../../src/internal.ts';
import type { Sandbox } from './support.ts';
import { metaOf, run, sandbox, textOf, toolContext, toolsOf } from './support.ts';

let box: Sandbox;
let home: string;
let previousHome: string | undefined;
let listener: Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  box = sandbox('rein-sandbox-');
  // A fake home with a fake key: the sandbox must hide it.
  home = join(box.base, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  mkdirSync(join(home, '.aws'), { recursive: true });
  writeFileSync(join(home, '.ssh/id_rsa'), 'FAKE-PRIVATE-KEY\n');
  writeFileSync(join(home, '.aws/credentials'), 'FAKE-AWS-SECRET\n');
  writeFileSync(join(home, '.netrc'), 'machine x password FAKE-NETRC\n');
  writeFileSync(join(box.reinHome, 'config.json'), '{"key":"FAKE-REIN-KEY"}\n');
  previousHome = process.env['HOME'];
  process.env['HOME'] = home;
  listener = createServer((socket) => {
    connections++;
    socket.end('HELLO-FROM-OUTSIDE\n');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as AddressInfo).port;
});

afterAll(async () => {
  if (previousHome === undefined) delete process.env['HOME'];
  else process.env['HOME'] = previousHome;
  await new Promise((resolve) => listener.close(resolve));
  box.cleanup();
});

describe('the bash sandbox', () => {
  it('is available here (bwrap installed, namespaces work as this user)', () => {
    const status = sandboxStatus();
    expect(status.detail).toBeTruthy();
    expect(status.available).toBe(true);
  });

  it('writes the workspace, but nothing outside it, and never sees credentials', async () => {
    const tools = toolsOf(box, { sandbox: true });
    const outsideFile = join(box.outside, 'planted.txt');
    const result = await run(tools.bash, {
      command: [
        'echo inside > made-in-sandbox.txt && echo WS-OK',
        `echo pwned > ${outsideFile} || echo OUTSIDE-REFUSED`,
        'echo pwned > /etc/rein-sandbox-test || echo ETC-REFUSED',
        'cat ~/.ssh/id_rsa || echo SSH-HIDDEN',
        'cat ~/.aws/credentials || echo AWS-HIDDEN',
        'cat ~/.netrc; echo NETRC-DONE',
        `cat ${box.reinHome}/config.json || echo REIN-HIDDEN`,
        'echo temp > /tmp/private.txt && echo TMP-OK',
      ].join('\n'),
    });
    const text = textOf(result.output);
    expect(metaOf(result.output)).toMatchObject({ sandboxed: true, exitCode: 0 });
    for (const word of [
      'WS-OK',
      'OUTSIDE-REFUSED',
      'ETC-REFUSED',
      'SSH-HIDDEN',
      'AWS-HIDDEN',
      'REIN-HIDDEN',
      'TMP-OK',
    ])
      expect(text).toContain(word);
    for (const secret of ['FAKE-PRIVATE-KEY', 'FAKE-AWS-SECRET', 'FAKE-NETRC', 'FAKE-REIN-KEY'])
      expect(text).not.toContain(secret);
    expect(readFileSync(join(box.workspace, 'made-in-sandbox.txt'), 'utf8')).toBe('inside\n');
    expect(existsSync(outsideFile)).toBe(false);
    expect(existsSync('/etc/rein-sandbox-test')).toBe(false);
    // The private /tmp left nothing on the real one.
    expect(existsSync('/tmp/private.txt')).toBe(false);
    expect(readFileSync(join(home, '.ssh/id_rsa'), 'utf8')).toBe('FAKE-PRIVATE-KEY\n');
  });

  it('cannot reach a loopback port opened by the test, unless the network is allowed', async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3 || echo NO-NETWORK`;
    const before = connections;
    const denied = await run(toolsOf(box, { sandbox: true }).bash, { command: probe });
    expect(textOf(denied.output)).toContain('NO-NETWORK');
    expect(textOf(denied.output)).not.toContain('HELLO-FROM-OUTSIDE');
    expect(connections).toBe(before);
    const allowed = await run(toolsOf(box, { sandbox: true }).bash, { command: probe, network: true });
    expect(textOf(allowed.output)).toContain('HELLO-FROM-OUTSIDE');
    expect(connections).toBe(before + 1);
  });

  it('cannot signal a process outside the sandbox', async () => {
    const victim = spawn('sleep', ['300'], { stdio: 'ignore' });
    try {
      const result = await run(toolsOf(box, { sandbox: true }).bash, {
        command: `kill -9 ${victim.pid} && echo KILLED || echo KILL-REFUSED`,
      });
      expect(textOf(result.output)).toContain('KILL-REFUSED');
      expect(victim.exitCode).toBeNull();
      expect(() => process.kill(victim.pid!, 0)).not.toThrow();
    } finally {
      victim.kill('SIGKILL');
    }
  });

  it('cancel kills the sandboxed process group', async () => {
    const controller = new AbortController();
    const marker = 987_654 + Math.floor(Math.random() * 1000);
    const call = run(
      toolsOf(box, { sandbox: true }).bash,
      { command: `sleep ${marker} & sleep ${marker}` },
      await toolContext(controller.signal),
    );
    // Find the sandboxed sleeps from outside, by their unique argument.
    const sleeps = (): { pid: number; group: number }[] =>
      readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .flatMap((name) => {
          try {
            const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
            if (command[0] !== 'sleep' || command[1] !== String(marker)) return [];
            const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            if (fields[0] === 'Z') return [];
            return [{ pid: Number(name), group: Number(fields[2]) }];
          } catch {
            // Gone meanwhile.
            return [];
          }
        });
    const deadline = Date.now() + 20_000;
    while (sleeps().length < 2 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const found = sleeps();
    expect(found).toHaveLength(2);
    controller.abort();
    const result = await call;
    expect(result.error?.code).toBe('ABORTED');
    expect(sleeps()).toEqual([]);
    expect(livingGroupMembers(found[0]!.group)).toEqual([]);
  }, 40_000);

  it('refuses to run unsandboxed when the sandbox cannot run, with a typed error', async () => {
    const tools = toolsOf(box, { sandbox: { bwrap: join(box.base, 'no-such-bwrap') } });
    const result = await run(tools.bash, { command: 'echo should-not-run' });
    expect(result.error?.code).toBe('SANDBOX_UNAVAILABLE');
    expect(result.error?.message).toContain('no-such-bwrap');
  });
});
