// Loads a benchmark subject by name from its adapter file (bench/adapters/), as the cells do.
import type { BenchSubject } from './subject.ts';

/** The subjects a cell can load: adapter file and, for Rein variants, the factory options. */
export const subjectFiles: Readonly<Record<string, string>> = {
  rein: 'rein',
  'rein-scripted': 'rein',
  pi: 'pi',
  'ai-sdk': 'ai-sdk',
  'openai-agents': 'openai-agents',
  floor: 'floor',
};

/**
 * Imports the named subject's adapter (from `adapters`, by default this tree's bench/adapters/, whose Rein
 * adapter runs this tree's src/) and returns its subject.
 */
export async function loadSubject(
  name: string,
  adapters = new URL('./adapters/', import.meta.url),
): Promise<BenchSubject> {
  const file = subjectFiles[name];
  if (file === undefined) throw new Error(`unknown subject '${name}'`);
  // A computed specifier keeps the peers (installed only under bench/) out of the main typecheck.
  const module = (await import(new URL(`${file}.ts`, adapters).href)) as {
    subject: BenchSubject;
    createReinSubject?: (options: { name: string; scripted?: boolean }) => BenchSubject;
  };
  if (name === 'rein-scripted') return module.createReinSubject!({ name, scripted: true });
  return module.subject;
}
