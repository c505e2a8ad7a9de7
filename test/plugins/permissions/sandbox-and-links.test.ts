import { linkSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReinHarness } from '../../../src/index.ts';
import type { Sandbox } from '../../tools/support.ts';
import { run, sandbox, textOf, toolsOf } from '../../tools/support.ts';
import { loggedResults, permissionFixture } from './support.ts';

let box: Sandbox;

beforeEach(() => {
  box = sandbox('rein-policy-');
});

afterEach(() => box.cleanup());

const bash = (id: string, args: Record<string, unknown>) => ({ id, name: 'bash', arguments: args });

describe('the sandbox approval mode', () => {
  it('runs sandboxed bash and inside edits unasked, and asks for network or leaving the sandbox', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'sandbox',
      sandbox: true,
      responses: [
        {
          toolCalls: [
            bash('confined', { command: 'echo from-sandbox > made.txt && cat made.txt' }),
            bash('network', { command: 'echo net', network: true }),
            bash('escape', { command: 'echo free', unsandboxed: true }),
            { id: 'write', name: 'write_file', arguments: { path: 'notes.txt', content: 'hi\n' } },
          ],
        },
      ],
      approver: () => ({ decision: 'deny' }),
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(f.asked.map((request) => request.callId)).toEqual(['network', 'escape']);
    expect(f.asked.map((request) => request.reason)).toEqual([
      'bash runs `echo net` with network access, which the sandbox does not give',
      'bash runs `echo free` outside the sandbox',
    ]);
    const results = Object.fromEntries(loggedResults(f.agent).map((result) => [result.callId, result]));
    expect(results.confined).toMatchObject({ isError: false, text: 'from-sandbox\n[exit code 0]' });
    expect(results.network).toMatchObject({ code: 'TOOL_DENIED' });
    expect(results.escape).toMatchObject({ code: 'TOOL_DENIED' });
    expect(results.write).toMatchObject({ isError: false });
    expect(readFileSync(join(box.workspace, 'made.txt'), 'utf8')).toBe('from-sandbox\n');
    await f.harness.dispose();
  });

  it('falls back to ask, loudly, where bwrap cannot run', async () => {
    const harness = await createReinHarness({
      home: box.reinHome,
      cwd: box.workspace,
      approve: 'sandbox',
      env: { REIN_BWRAP: join(box.base, 'missing-bwrap') },
    });
    try {
      expect(harness.approvalMode).toBe('ask');
      expect(harness.warnings).toHaveLength(1);
      expect(harness.warnings[0]).toMatchObject({
        code: 'SANDBOX_UNAVAILABLE',
        source: 'sandbox',
        loud: true,
      });
      expect(harness.warnings[0]!.message).toMatch(
        /^the sandbox approval mode is not available: .*missing-bwrap/,
      );
      const bashTool = harness.tools.get('bash');
      expect(bashTool?.confinement?.({ command: 'ls' } as never)).toEqual({
        sandboxed: false,
        network: true,
      });
    } finally {
      await harness.dispose();
    }
  });
});

describe('hard links', () => {
  beforeEach(() => {
    writeFileSync(join(box.outside, 'target.txt'), 'OUTSIDE-ORIGINAL\n');
    linkSync(join(box.outside, 'target.txt'), join(box.workspace, 'shared.txt'));
    writeFileSync(join(box.workspace, 'plain.txt'), 'plain OUTSIDE-ORIGINAL lookalike\n');
  });

  it('the tools refuse a hard-linked file unasked, and walks skip it and say so', async () => {
    const tools = toolsOf(box);
    expect((await run(tools.read_file, { path: 'shared.txt' })).error?.code).toBe('HARD_LINKED');
    expect((await run(tools.write_file, { path: 'shared.txt', content: 'x' })).error?.code).toBe(
      'HARD_LINKED',
    );
    expect(
      (await run(tools.edit_file, { path: 'shared.txt', old_string: 'OUTSIDE', new_string: 'x' })).error
        ?.code,
    ).toBe('HARD_LINKED');
    const grep = textOf((await run(tools.grep, { pattern: 'ORIGINAL' })).output);
    expect(grep).toBe(
      'plain.txt:1:plain OUTSIDE-ORIGINAL lookalike\n' +
        '(skipped 1 hard-linked files (another name may lie outside the workspace): shared.txt)',
    );
    expect(textOf((await run(tools.glob, { pattern: '*.txt' })).output)).toBe(
      'plain.txt\n(skipped 1 hard-linked files (another name may lie outside the workspace): shared.txt)',
    );
    expect(textOf((await run(tools.list_dir, {})).output)).toContain(
      'shared.txt (2 hard links; reading it asks first)',
    );
    expect(readFileSync(join(box.outside, 'target.txt'), 'utf8')).toBe('OUTSIDE-ORIGINAL\n');
  });

  it('reading or writing one asks first, saying why; an approved write replaces the name, not the shared inode', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'auto-edit',
      responses: [
        {
          toolCalls: [
            { id: 'read', name: 'read_file', arguments: { path: 'shared.txt' } },
            { id: 'write', name: 'write_file', arguments: { path: 'shared.txt', content: 'NEW\n' } },
          ],
        },
      ],
      approver: () => ({ decision: 'allow-once' }),
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(f.asked.map((request) => [request.callId, request.reason])).toEqual([
      [
        'read',
        'read_file touches shared.txt; shared.txt has 2 hard links, so another of its names may lie outside the workspace',
      ],
      [
        'write',
        'write_file touches shared.txt; shared.txt has 2 hard links, so another of its names may lie outside the workspace',
      ],
    ]);
    const results = Object.fromEntries(loggedResults(f.agent).map((result) => [result.callId, result]));
    expect(results.read).toMatchObject({ isError: false, text: '     1\tOUTSIDE-ORIGINAL' });
    expect(results.write).toMatchObject({ isError: false });
    // The outside name still holds the old content; the workspace name is a new, single-link file.
    expect(readFileSync(join(box.outside, 'target.txt'), 'utf8')).toBe('OUTSIDE-ORIGINAL\n');
    expect(readFileSync(join(box.workspace, 'shared.txt'), 'utf8')).toBe('NEW\n');
    expect(statSync(join(box.workspace, 'shared.txt')).nlink).toBe(1);
    expect(statSync(join(box.outside, 'target.txt')).nlink).toBe(1);
    await f.harness.dispose();
  });
});
