import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

const readmePattern = /^readme(\.(md|markdown|txt|rst))?$/i;
const sniffBytes = 4096;

/**
 * Picks the file the demo reads in a directory: a README when there is one, otherwise the first
 * (alphabetically) non-hidden regular file that looks like text; undefined when there is none.
 */
export async function pickDemoFile(directory: string): Promise<string | undefined> {
  let names: string[];
  try {
    const entries = await readdir(directory, { withFileTypes: true });
    names = entries
      .filter((entry) => entry.isFile() && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  } catch {
    // An unreadable or missing directory simply has no file to show.
    return undefined;
  }
  const readme = names.find((name) => name === 'README.md') ?? names.find((name) => readmePattern.test(name));
  if (readme !== undefined) return readme;
  for (const name of names) {
    if (await looksLikeText(join(directory, name))) return name;
  }
  return undefined;
}

async function looksLikeText(path: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(sniffBytes);
    const { bytesRead } = await handle.read(buffer, 0, sniffBytes, 0);
    if (bytesRead === 0) return false;
    return !buffer.subarray(0, bytesRead).includes(0);
  } catch {
    // A file we cannot open is not a candidate.
    return false;
  } finally {
    await handle?.close();
  }
}
