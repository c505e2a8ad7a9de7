import { compactSession, createReinHarness } from '../index.ts';
import { reinWarningLine } from '../internal.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startReinServer, webPaths } from '../server/index.ts';
import { exitCodes, usageError } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import type { ParsedCommand } from './command-line.ts';
import { stringOption } from './command-line.ts';
import { approvalModeOption, checkModel, resolveWorkspace } from './command-options.ts';
import { webSettings } from './web-settings.ts';

/** `rein web` (and bare `rein`): starts the local Web UI server, prints its URL, runs until Ctrl-C. */
export async function webCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const { values } = parsed;
  const port = portOption(stringOption(values, 'port'));
  const approve = approvalModeOption('web', values.approve);
  const model = stringOption(values, 'model');
  if (model !== undefined) checkModel('web', model);
  const cwd = await resolveWorkspace(io.cwd, stringOption(values, 'cwd'));
  const harness = await createReinHarness({
    cwd,
    env: io.env,
    ...(model !== undefined ? { model } : {}),
    ...(approve !== undefined ? { approve } : {}),
  });
  try {
    for (const warning of harness.warnings) io.stderr.write(`${reinWarningLine(warning)}\n`);
    for (const notice of harness.notices) io.stderr.write(`${notice}\n`);
    if (!existsSync(join(webPaths.dist, 'index.html'))) {
      // The API still serves; the browser page explains that the UI is missing.
      io.stderr.write(
        `rein: warning: the Web UI is not built (no ${webPaths.dist}); run \`npm run build\` in the Rein checkout\n`,
      );
    }
    const server = await startReinServer({
      harness,
      cwd,
      // The built-in tools and the approval policy are bound to this directory.
      workspace: cwd,
      home: harness.home,
      ...(port !== undefined ? { port } : {}),
      compact: (agent) => compactSession(harness, agent),
      settings: webSettings(harness, io.env),
      mcp: harness.mcp,
    });
    io.stdout.write(`Rein is running at ${server.url}\n`);
    io.stderr.write("Open the URL in your browser (it carries this launch's token). Press Ctrl-C to stop.\n");
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    io.stderr.write('Stopping…\n');
    await server.close();
    return exitCodes.ok;
  } finally {
    await harness.dispose();
  }
}

function portOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(value) || value > 65_535) {
    throw usageError('web', `'--port' must be a port number from 0 to 65535, not '${text}'`);
  }
  return value;
}
