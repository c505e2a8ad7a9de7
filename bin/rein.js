#!/usr/bin/env node
// The `rein` command: runs the TypeScript sources through the installed tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
const { runMain } = await import('../src/cli/main.ts');
await runMain();
