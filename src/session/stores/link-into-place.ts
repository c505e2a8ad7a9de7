import { randomUUID } from 'node:crypto';
import { link, open, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Creates the file at `path` with `content`, only if nothing is there: the content is written whole to
 * a hidden temporary file beside it (mode 0600; made durable first with `sync`) and hard-linked into
 * place, so no reader ever sees it partly written. An existing `path` rejects with the system's
 * `EEXIST` error; the temporary file is removed either way.
 */
export async function linkIntoPlace(
  path: string,
  content: string,
  options: { sync?: boolean } = {},
): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);
  try {
    const staging = await open(temporary, 'wx', 0o600);
    try {
      // The umask cannot loosen 0600, but a filesystem default might: set it explicitly.
      await staging.chmod(0o600);
      await staging.writeFile(content, 'utf8');
      if (options.sync === true) await staging.datasync();
    } finally {
      await staging.close();
    }
    await link(temporary, path);
  } finally {
    await unlink(temporary).catch(() => {
      // Never created, or already gone: nothing to clean up.
    });
  }
}
