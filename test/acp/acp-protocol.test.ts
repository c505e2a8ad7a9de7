import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../cli/rein-process.ts';
import { reinBin, reinEnvironment, sandbox } from '../cli/rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
});

afterAll(() => box.cleanup());

interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: number | string | null;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: { code?: string } };
}

describe('rein acp: the wire', () => {
  it('answers malformed JSON, unknown methods, bad params and unknown sessions with protocol errors and stays up', async () => {
    const child = spawn(process.execPath, [reinBin, 'acp'], {
      cwd: box.workspace,
      env: reinEnvironment(box.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const messages = (): JsonRpcMessage[] =>
      stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as JsonRpcMessage);
    const answerTo = async (id: number | null, count = 1): Promise<JsonRpcMessage> => {
      await expect
        .poll(() => messages().filter((message) => message.id === id).length, { timeout: 30_000 })
        .toBe(count);
      return messages().filter((message) => message.id === id)[count - 1]!;
    };
    const send = (line: string): void => {
      child.stdin.write(`${line}\n`);
    };

    send(
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}',
    );
    expect((await answerTo(1)).result).toMatchObject({
      protocolVersion: 1,
      agentCapabilities: { loadSession: true },
    });

    send('{this is not json');
    expect((await answerTo(null)).error?.code).toBe(-32700);

    send('{"jsonrpc":"2.0","id":2,"method":"rein/no-such-method","params":{}}');
    expect((await answerTo(2)).error?.code).toBe(-32601);

    send(
      '{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"no-such-session","prompt":[{"type":"text","text":"hi"}]}}',
    );
    const unknown = await answerTo(3);
    expect(unknown.error).toMatchObject({ code: -32002, data: { code: 'SESSION_NOT_FOUND' } });

    send('{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"mcpServers":[]}}');
    expect((await answerTo(4)).error?.code).toBe(-32602);

    send('{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}');
    expect((await answerTo(5)).error).toMatchObject({ code: -32602, data: { code: 'INVALID_CWD' } });

    send(
      `{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":${JSON.stringify(box.workspace)},"mcpServers":[]}}`,
    );
    const created = await answerTo(6);
    expect(typeof created.result?.sessionId).toBe('string');

    send(
      `{"jsonrpc":"2.0","id":7,"method":"session/set_mode","params":{"sessionId":${JSON.stringify(created.result!.sessionId)},"modeId":"reckless"}}`,
    );
    expect((await answerTo(7)).error).toMatchObject({ code: -32602, data: { code: 'INVALID_MODE' } });

    const sessionId = JSON.stringify(created.result!.sessionId);
    send(`{"jsonrpc":"2.0","id":8,"method":"session/close","params":{"sessionId":${sessionId}}}`);
    expect((await answerTo(8)).result).toEqual({});
    send(
      `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":${sessionId},"prompt":[{"type":"text","text":"hi"}]}}`,
    );
    expect((await answerTo(9)).error).toMatchObject({ code: -32002, data: { code: 'SESSION_NOT_FOUND' } });
    send(
      `{"jsonrpc":"2.0","id":10,"method":"session/resume","params":{"sessionId":${sessionId},"cwd":${JSON.stringify(box.workspace)}}}`,
    );
    expect((await answerTo(10)).result).toMatchObject({ modes: { currentModeId: 'ask' } });
    send(
      `{"jsonrpc":"2.0","id":11,"method":"session/set_mode","params":{"sessionId":${sessionId},"modeId":"read-only"}}`,
    );
    expect((await answerTo(11)).result).toEqual({});

    // Every byte on stdout was a protocol message (the demo notice went to stderr).
    expect(messages().every((message) => message.jsonrpc === '2.0')).toBe(true);
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});
