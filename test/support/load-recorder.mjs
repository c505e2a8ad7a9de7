// Preloaded with `node --import` by test/cli/lazy-start.test.ts: registers a module hook that appends the
// URL of every ES module the process loads to the file named by REIN_LOAD_LOG.
import { register } from 'node:module';

register('./load-recorder-hooks.mjs', import.meta.url);
