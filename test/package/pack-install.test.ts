// The package as a user gets it: `npm pack` (which runs `prepare`, i.e. the full build) in a staging copy of
// this checkout, the tarball installed into an empty project with production dependencies only, then the
// installed `rein` command and the SDK used from that project.
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForOutput } from '../cli/rein-process.ts';
import { scriptedTurnModule, typedUsage } from './fixtures-consumer.ts';

const run = promisify(execFile);
const checkout = resolve(import.meta.dirname, '..', '..');
const version = (JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { version: string })
  .version;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let root: string;
let project: string;
let tarball: string;
let packedFiles: string[];
const env: NodeJS.ProcessEnv = { ...process.env, REIN_DEMO_DELAY_MS: '0', NO_COLOR: '1' };
for (const name of ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'REIN_MODEL'])
  delete env[name];

/** Runs a command in the installed project; resolves stdout and stderr, rejects on a non-zero exit. */
async function inProject(file: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return run(file, args, { cwd: project, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'rein-pack-'));
  env.REIN_HOME = join(root, 'home');
  // A staging copy, so the build that `npm pack` runs never rewrites the dist/ other tests are spawning.
  const staging = join(root, 'staging');
  for (const path of [
    'package.json',
    'package-lock.json',
    'README.md',
    'tsconfig.json',
    'tsconfig.build.json',
    'bin',
    'src',
    'scripts',
    'web/src',
  ]) {
    cpSync(join(checkout, path), join(staging, path), { recursive: true });
  }
  symlinkSync(join(checkout, 'node_modules'), join(staging, 'node_modules'), 'dir');
  const packed = await run(npm, ['pack', '--json', '--pack-destination', root], {
    cwd: staging,
    env,
    timeout: 150_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const report = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
    filename: string;
    files: { path: string }[];
  }[];
  tarball = join(root, report[0]!.filename);
  packedFiles = report[0]!.files.map((file) => file.path).sort();

  project = join(root, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  await run(npm, ['install', '--omit=dev', '--no-audit', '--no-fund', '--no-package-lock', tarball], {
    cwd: project,
    env,
    timeout: 120_000,
  });
  writeFileSync(
    join(project, 'README.md'),
    '# Consumer\n\nA project that installed rein.\n\n## Usage\n\nrun it\n',
  );
}, 280_000);

afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds only what runs: the bin, the compiled dist (JS, maps, declarations, the Web UI), package.json, README', () => {
    const outside = packedFiles.filter(
      (path) => !/^(bin\/rein\.js|bin\/node-check\.js|package\.json|README\.md|dist\/.+)$/.test(path),
    );
    expect(outside).toEqual([]);
    for (const needed of [
      'dist/cli.js',
      'dist/index.js',
      'dist/testing.js',
      'dist/types/index.d.ts',
      'dist/types/testing/index.d.ts',
      'dist/web/index.html',
      'dist/web/app.js',
    ]) {
      expect(packedFiles).toContain(needed);
    }
    expect(packedFiles.some((path) => path.endsWith('.js.map'))).toBe(true);
    expect(packedFiles.some((path) => path.startsWith('src/') || path.startsWith('test/'))).toBe(false);
  }, 120_000);

  it('installs with production dependencies only: no tsx, esbuild or typescript beside it', async () => {
    const listed = await inProject(npm, ['ls', '--all', '--json']);
    const text = listed.stdout;
    for (const devOnly of ['"tsx"', '"esbuild"', '"typescript"', '"vitest"'])
      expect(text).not.toContain(devOnly);
    expect(text).toContain('"rein"');
  }, 120_000);
});

describe('the installed rein command', () => {
  it('rein --version prints the package version', async () => {
    const { stdout } = await inProject(join(project, 'node_modules', '.bin', 'rein'), ['--version']);
    expect(stdout).toBe(`${version}\n`);
  }, 120_000);

  it('rein run on the demo model completes the running example: reads the README and summarizes its headings', async () => {
    const { stdout, stderr } = await inProject(join(project, 'node_modules', '.bin', 'rein'), [
      'run',
      '--model',
      'demo/running-example',
      '--approve',
      'yolo',
      'what is this project?',
    ]);
    expect(stderr).toContain('⏺ read_file {"path":"README.md"}');
    expect(stderr).toContain('✓ read_file');
    expect(stdout).toContain('`README.md` has 7 lines and 2 headings');
    expect(stdout).toMatch(/- Consumer\n {2}- Usage/);
  }, 120_000);

  it('rein web serves the prebuilt UI and answers the API with the launch token only', async () => {
    // A home of its own, so the session list is known: empty.
    const child = spawn(join(project, 'node_modules', '.bin', 'rein'), ['web', '--port', '0'], {
      cwd: project,
      env: { ...env, REIN_HOME: join(root, 'web-home') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const closed = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    try {
      const printed = await waitForOutput(
        child,
        'stdout',
        (text) => /Rein is running at \S+\n/.test(text),
        60_000,
      );
      const url = new URL(/Rein is running at (\S+)\n/.exec(printed)![1]!);
      const page = await fetch(new URL('/', url));
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('app.js');
      const script = await fetch(new URL('/app.js', url));
      expect(script.status).toBe(200);
      expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
      expect((await fetch(new URL('/api/sessions', url))).status).toBe(401);
      const sessions = await fetch(new URL('/api/sessions', url), {
        headers: { authorization: `Bearer ${url.searchParams.get('token')!}` },
      });
      expect(sessions.status).toBe(200);
      expect(((await sessions.json()) as { sessions: unknown[] }).sessions).toEqual([]);
      expect(stderr).not.toContain('not built');
    } finally {
      child.kill('SIGINT');
    }
    expect(await closed).toBe(0);
  }, 120_000);
});

describe('the installed SDK', () => {
  it("a plain .mjs imports 'rein' and 'rein/testing' and runs a scripted turn with a tool call", async () => {
    writeFileSync(join(project, 'turn.mjs'), scriptedTurnModule);
    const { stdout } = await inProject(process.execPath, ['turn.mjs']);
    const { types, results } = JSON.parse(stdout) as {
      types: string[];
      results: { message: { content: { content?: unknown }[] } }[];
    };
    expect(types.filter((type) => !type.startsWith('agent/') && !type.startsWith('request/'))).toEqual([
      'turn/start',
      'step/start',
      'user/message',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    expect(JSON.stringify(results[0]!.message)).toContain('contents of README.md');
  }, 120_000);

  it('a .ts file over the exported types passes tsc --noEmit, declarations included (skipLibCheck off)', async () => {
    writeFileSync(join(project, 'usage.ts'), typedUsage);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(checkout, 'node_modules', '@types')],
        },
        files: ['usage.ts'],
      }),
    );
    // The checkout's compiler: the project itself has production dependencies only.
    const tsc = join(checkout, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], {
      cwd: project,
      env,
      timeout: 90_000,
    }).catch((error: { stdout?: string; code?: number }) => ({
      stdout: error.stdout ?? '',
      stderr: '',
      failed: error.code,
    }));
    expect(result.stdout).toBe('');
    expect('failed' in result).toBe(false);
  }, 120_000);

  it('a subpath the package does not export fails with ERR_PACKAGE_PATH_NOT_EXPORTED', async () => {
    for (const subpath of ['rein/dist/index.js', 'rein/src/internal.ts', 'rein/internal']) {
      const attempt = await inProject(process.execPath, [
        '--input-type=module',
        '-e',
        `import(${JSON.stringify(subpath)}).then(() => console.log('loaded'), (error) => console.log(error.code))`,
      ]);
      expect(attempt.stdout.trim(), subpath).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
    }
  }, 120_000);
});
