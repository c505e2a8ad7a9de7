import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimumNodeVersion, unsupportedNodeMessage } from '../../bin/node-check.js';
import type { Sandbox } from './rein-process.ts';
import { runRein, sandbox } from './rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
});

afterAll(() => box.cleanup());

describe('the Node.js version check of bin/rein.js', () => {
  it('says nothing for the minimum and anything newer', () => {
    for (const version of [
      '20.19.0',
      'v20.19.0',
      '20.20.2',
      '20.100.0',
      '21.0.0',
      '22.11.0',
      '24.1.0-nightly2025',
    ]) {
      expect(unsupportedNodeMessage(version), version).toBeUndefined();
    }
  });

  it('names the version it needs and the one it got for anything older or unreadable', () => {
    expect(unsupportedNodeMessage('20.18.3')).toBe(
      'rein: Rein needs Node.js 20.19.0 or newer, but this is Node.js v20.18.3. Install a current Node.js (https://nodejs.org) and run rein again.',
    );
    for (const version of ['v18.20.4', '16.0.0', '20.9.0', '19.99.99', '0.12.0', 'garbage']) {
      expect(unsupportedNodeMessage(version), version).toContain(
        `needs Node.js ${minimumNodeVersion} or newer`,
      );
    }
  });

  it('agrees with package.json engines.node', () => {
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(`${pkg.engines.node}.0`).toBe(`>=${minimumNodeVersion}`);
  });

  it('the real rein on a Node.js that reports an old version prints the requirement on stderr and exits 1 before the CLI runs', async () => {
    // The preload only changes what process.versions reports; bin/rein.js runs unchanged.
    const preload = join(box.root, 'old-node.mjs');
    writeFileSync(preload, "Object.defineProperty(process.versions, 'node', { value: '18.20.4' });\n");
    const result = await runRein(['run', '--model', 'demo/running-example', 'hi'], {
      cwd: box.root,
      env: { ...box.env, NODE_OPTIONS: `--import=${preload}` },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    // The run never started: its Rein home (sessions, config) was not even created.
    expect(existsSync(box.home)).toBe(false);
    expect(result.stderr).toBe(
      'rein: Rein needs Node.js 20.19.0 or newer, but this is Node.js v18.20.4. Install a current Node.js (https://nodejs.org) and run rein again.\n',
    );
  });
});
