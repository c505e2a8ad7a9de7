import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from './rein-process.ts';
import { runRein, sandbox } from './rein-process.ts';

let box: Sandbox;
const configFile = (): string => join(box.home, 'config.json');
const readConfig = (): unknown => JSON.parse(readFileSync(configFile(), 'utf8'));

beforeEach(() => {
  box?.cleanup();
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
});

afterAll(() => box.cleanup());

const rein = (args: string[], input?: string, env: Record<string, string> = {}) =>
  runRein(args, {
    cwd: box.workspace,
    env: { ...box.env, ...env },
    ...(input !== undefined ? { input } : {}),
  });

describe('rein config', () => {
  it('path prints the config file of the home', async () => {
    const result = await rein(['config', 'path']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${configFile()}\n`);
  }, 120_000);

  it('set stores JSON values and strings at dotted keys (model ids may contain dots); get reads them back', async () => {
    expect((await rein(['config', 'set', 'defaultModel', 'deepseek/deepseek-chat'])).code).toBe(0);
    expect(
      (await rein(['config', 'set', 'models.deepseek/deepseek-v3.2.contextWindow', '131072'])).code,
    ).toBe(0);
    expect(
      (await rein(['config', 'set', 'providers.ollama.baseUrl', 'http://127.0.0.1:11434/v1'])).code,
    ).toBe(0);
    expect(readConfig()).toEqual({
      defaultModel: 'deepseek/deepseek-chat',
      models: { 'deepseek/deepseek-v3.2': { contextWindow: 131072 } },
      providers: { ollama: { baseUrl: 'http://127.0.0.1:11434/v1' } },
    });
    const model = await rein(['config', 'get', 'defaultModel']);
    expect(model.stdout).toBe('deepseek/deepseek-chat\n');
    const window = await rein(['config', 'get', 'models.deepseek/deepseek-v3.2.contextWindow']);
    expect(window.stdout).toBe('131072\n');
    expect(statSync(configFile()).mode & 0o777).toBe(0o600);
  }, 120_000);

  it('unset removes a key and the sections it empties; unsetting what is not set is an error', async () => {
    await rein(['config', 'set', 'providers.ollama.baseUrl', 'http://127.0.0.1:11434/v1']);
    await rein(['config', 'set', 'defaultModel', 'ollama/llama3']);
    expect((await rein(['config', 'unset', 'providers.ollama.baseUrl'])).code).toBe(0);
    expect(readConfig()).toEqual({ defaultModel: 'ollama/llama3' });
    const again = await rein(['config', 'unset', 'providers.ollama.baseUrl']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('error CONFIG_KEY_NOT_SET');
  }, 120_000);

  it('a misspelled key is refused with the nearest known key, and nothing is written', async () => {
    const result = await rein(['config', 'set', 'defaultModle', 'x/y']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Rein reads no config key 'defaultModle' (did you mean 'defaultModel'?)");
    expect(() => statSync(configFile())).toThrow();
  }, 120_000);

  it('set-key reads the key from standard input, saves it 0600, and get never prints it whole', async () => {
    const secret = 'sk-test-secret-key-7777';
    const saved = await rein(['config', 'set-key', 'anthropic'], `${secret}\n`);
    expect(saved.code).toBe(0);
    expect(saved.stdout + saved.stderr).not.toContain(secret);
    expect(readConfig()).toEqual({ keys: { anthropic: secret } });
    expect(statSync(configFile()).mode & 0o777).toBe(0o600);
    const shown = await rein(['config', 'get']);
    expect(shown.stdout).not.toContain(secret);
    expect(shown.stdout).toContain('ends in …7777');
    const refused = await rein(['config', 'set', 'keys.anthropic', 'sk-plain']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('rein config set-key anthropic');
    const unknown = await rein(['config', 'set-key', 'nosuchvendor'], 'sk-x\n');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('error UNKNOWN_PROVIDER');
    const empty = await rein(['config', 'set-key', 'openai'], '');
    expect(empty.code).toBe(1);
    expect(readConfig()).toEqual({ keys: { anthropic: secret } });
  }, 120_000);

  it('edit runs $EDITOR on the file and then reports what is wrong with it', async () => {
    const editor = join(box.root, 'editor.sh');
    writeFileSync(editor, `#!/bin/sh\nprintf '{"defaultModel":"demo/running-example","modles":{}}' > "$1"\n`);
    chmodSync(editor, 0o755);
    const result = await rein(['config', 'edit'], undefined, { EDITOR: editor });
    expect(result.code).toBe(0);
    expect(readConfig()).toEqual({ defaultModel: 'demo/running-example', modles: {} });
    expect(result.stderr).toContain("unknown key 'modles' (did you mean 'models'?)");
    const broken = join(box.root, 'broken.sh');
    writeFileSync(broken, `#!/bin/sh\nprintf '{oops' > "$1"\n`);
    chmodSync(broken, 0o755);
    const bad = await rein(['config', 'edit'], undefined, { EDITOR: broken });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('error INVALID_CONFIG');
    expect(bad.stderr).toContain('Run rein config edit again');
  }, 120_000);

  it('an unknown subcommand is a usage error that lists the real ones', async () => {
    const result = await rein(['config', 'frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "unknown subcommand 'frobnicate' (one of get, set, unset, set-key, path, edit)",
    );
  }, 120_000);
});

describe('the config file as other commands see it', () => {
  it('misspelled keys are warned about with the nearest valid key, and the command still works', async () => {
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      configFile(),
      JSON.stringify({ defaultModle: 'x/y', providers: { deepseek: { baseURL: 'http://127.0.0.1:9' } } }),
    );
    const result = await rein(['sessions']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("unknown key 'defaultModle' (did you mean 'defaultModel'?)");
    expect(result.stderr).toContain(
      "unknown key 'providers.deepseek.baseURL' (did you mean 'providers.deepseek.baseUrl'?)",
    );
  }, 120_000);

  it('a broken config.json leaves sessions and show working (they say so), while run names the problem', async () => {
    writeFileSync(join(box.workspace, 'README.md'), '# Broken config\n');
    const made = await rein(['run', '--approve', 'yolo', 'summarize']);
    expect(made.code).toBe(0);
    writeFileSync(configFile(), '{ "defaultModel": ');
    const listed = await rein(['sessions']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('summarize');
    expect(listed.stderr).toContain('is not valid JSON');
    expect(listed.stderr).toContain('it is ignored for this command (fix it with: rein config edit)');
    const shown = await rein(['show', '--last']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('summarize');
    const run = await rein(['run', 'again']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error INVALID_CONFIG');
  }, 120_000);
});
