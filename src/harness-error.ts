// HarnessError alone, for the CLI's start-up path: importing it loads no other module, whereas the SDK
// barrels load (and register) everything. `rein --version` and `rein --help` must stay that small.
export { HarnessError } from './llm/llm-error.ts';
