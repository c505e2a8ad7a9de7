// Preloaded with `node --import` by test/cli/lazy-start.test.ts: registers a module hook that appends the
// URL of every ES module the process loads to the file named by REIN_LOAD_LOG, and at exit appends
// `node:<name>` for every built-in module the process loaded (imported or required, which the hook
// does not see), from Node's own list.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

register('./load-recorder-hooks.mjs', import.meta.url);

process.on('exit', () => {
  if (!process.env.REIN_LOAD_LOG) return;
  const builtins = process.moduleLoadList
    .filter((entry) => entry.startsWith('NativeModule '))
    .map((entry) => `node:${entry.slice('NativeModule '.length)}\n`);
  appendFileSync(process.env.REIN_LOAD_LOG, builtins.join(''));
});
