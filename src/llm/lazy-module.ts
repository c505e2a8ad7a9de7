import { createRequire } from 'node:module';

const requireFromHere = createRequire(import.meta.url);

/**
 * A getter that loads a dependency (through its CommonJS entry) on first use instead of at start-up:
 * for packages a command may never touch, such as the matcher of the glob tool or the diff of the edit
 * tool, whose loading adds milliseconds to every `rein` process.
 */
export function lazyModule<Module>(specifier: string): () => Module {
  let loaded: Module | undefined;
  return () => (loaded ??= requireFromHere(specifier) as Module);
}
