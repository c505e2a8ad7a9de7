import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runRein } from '../cli/rein-process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TuiFixture } from './tui-fixture.ts';
import { quit, tuiFixture } from './tui-fixture.ts';
import { keys, pty } from './tui-terminal.ts';

let fixture: TuiFixture;

beforeAll(async () => {
  fixture = await tuiFixture([{ text: 'Reviewed.' }]);
  const commands = join(fixture.box.workspace, '.rein', 'commands');
  mkdirSync(commands, { recursive: true });
  writeFileSync(
    join(commands, 'review.md'),
    '---\ndescription: Review a file closely\n---\nReview $ARGUMENTS carefully.\n',
  );
  mkdirSync(join(fixture.box.workspace, '.claude', 'commands'), { recursive: true });
  writeFileSync(join(fixture.box.workspace, '.claude', 'commands', 'explain.md'), 'Explain the code.\n');
});

afterAll(() => fixture.close());

describe.skipIf(pty === undefined)('slash commands in the TUI', () => {
  it('a template with arguments, /compact, /fork, /model (picker and by name), /help, /cost', async () => {
    const tui = fixture.start();
    await tui.waitFor('Type a prompt');
    tui.type('/rev');
    const completing = await tui.waitFor('Review a file closely');
    expect(completing).toContain('review');
    tui.type('\t');
    await tui.waitFor('/review ');
    tui.type('src/a.ts');
    tui.type(keys.enter);
    const reviewed = await tui.waitFor('turn 1 · completed');
    expect(reviewed).toContain('› Review src/a.ts carefully.');
    expect(reviewed).toContain('Reviewed.');
    const body = fixture.server.requests[0]!.body as { messages: { role: string; content: unknown }[] };
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'Review src/a.ts carefully.' });

    tui.type('/compact');
    tui.type(keys.enter);
    await tui.waitFor('Nothing to compact: the history already fits what is kept verbatim.');

    const [original] = fixture.sessionIds();
    tui.type('/fork');
    tui.type(keys.enter);
    const forked = await tui.waitFor(/Forked \S+ → now in \S+/);
    const fork = /now in (\S+) \(/.exec(forked)![1]!;
    expect(fixture.sessionIds().sort()).toEqual([original!, fork].sort());
    expect(forked).toContain('› Review src/a.ts carefully.');

    tui.type('/model');
    tui.type(keys.enter);
    const picker = await tui.waitFor('Model for the next requests');
    expect(picker).toContain('demo/running-example');
    expect(picker).toMatch(/deepseek\/deepseek-chat +current/);
    tui.type(keys.escape);
    await tui.waitFor((text) => !text.includes('Model for the next requests'));
    tui.type('/model demo/running-example');
    tui.type(keys.enter);
    const switched = await tui.waitFor('Model: demo/running-example from the next request on.');
    expect(switched).toContain(' demo/running-example · ask');
    tui.type('what is this project?');
    tui.type(keys.enter);
    // The running example's shell step asks in the default mode; allow it once.
    await tui.waitFor('Allow bash?');
    tui.type('y');
    const demo = await tui.waitFor('turn 2 · completed');
    expect(demo).toContain('Demo model');
    expect(fixture.server.requests).toHaveLength(1);

    tui.type('/cost');
    tui.type(keys.enter);
    await tui.waitFor(/turn 2: \d+ in/);
    tui.type('/help');
    tui.type(keys.enter);
    const help = await tui.waitFor('Alt+Enter or Ctrl-Q queue for the next turn');
    expect(help).toContain('/<template> [arguments]');
    await quit(tui);
    const forkEvents = await fixture.events(fork);
    const contexts = forkEvents
      .filter((event) => event.type === 'request/context')
      .map((event) => event.data);
    expect(contexts.at(-1)).toMatchObject({ provider: 'demo', model: 'running-example' });
  }, 120_000);

  it('/mcp lists the MCP servers with their state and tools', async () => {
    const own = await tuiFixture([]);
    try {
      const everything = resolve(
        import.meta.dirname,
        '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js',
      );
      writeFileSync(
        join(own.box.workspace, '.mcp.json'),
        JSON.stringify({
          mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } },
        }),
      );
      const trusted = await runRein(['mcp', 'trust'], { cwd: own.box.workspace, env: own.box.env });
      expect(trusted.code).toBe(0);
      const tui = own.start([], { cols: 120, rows: 40 });
      await tui.waitFor('Type a prompt');
      tui.type('/mcp');
      tui.type(keys.enter);
      const listed = await tui.waitFor('mcp__everything__echo (read-only)', 60_000);
      expect(listed).toMatch(
        /everything · ready · stdio \(mcp-servers\/everything [\d.]+\) · \S+\.mcp\.json/,
      );
      await quit(tui);
    } finally {
      await own.close();
    }
  }, 120_000);
});
