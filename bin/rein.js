#!/usr/bin/env node
// The `rein` command: checks the Node.js version before anything else loads, then runs the compiled CLI
// (dist/cli.js, built by `npm run build`; `npm install` in a checkout builds it).
import { unsupportedNodeMessage } from './node-check.js';

const unsupported = unsupportedNodeMessage(process.versions.node);
if (unsupported !== undefined) {
  process.stderr.write(unsupported + '\n');
  process.exitCode = 1;
} else {
  const cli = new URL('../dist/cli.js', import.meta.url);
  import(cli.href).then(
    (module) => module.runMain(),
    async (error) => {
      const { existsSync } = await import('node:fs');
      if (!existsSync(cli)) {
        process.stderr.write(
          'rein: the CLI is not built (no dist/cli.js); run `npm run build` in the Rein checkout\n',
        );
        process.exitCode = 1;
        return;
      }
      throw error;
    },
  );
}
