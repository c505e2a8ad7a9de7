import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { HttpError } from './http-error.ts';

const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/** Serves one file of the built UI; unknown paths that look like app routes get `index.html`. */
export async function serveStatic(
  root: string,
  pathname: string,
  response: ServerResponse,
  headOnly: boolean,
): Promise<void> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    // A malformed escape cannot name a file of ours.
    throw new HttpError(400, 'INVALID_PATH', 'malformed path');
  }
  if (decoded.includes('\0')) throw new HttpError(400, 'INVALID_PATH', 'malformed path');
  const base = resolve(root);
  let file = resolve(join(base, decoded === '/' ? 'index.html' : decoded));
  if (file !== base && !file.startsWith(base + sep)) throw new HttpError(404, 'NOT_FOUND', 'no such file');
  let info = await stat(file).catch(() => undefined);
  if (info === undefined && extname(decoded) === '') {
    file = join(base, 'index.html');
    info = await stat(file).catch(() => undefined);
  }
  if (info === undefined || !info.isFile()) {
    if (file.endsWith('index.html')) {
      throw new HttpError(
        503,
        'UI_NOT_BUILT',
        `the Web UI is not built (no ${file}); run \`npm run build\` in the Rein checkout`,
      );
    }
    throw new HttpError(404, 'NOT_FOUND', 'no such file');
  }
  response.statusCode = 200;
  response.setHeader('Content-Type', contentTypes[extname(file)] ?? 'application/octet-stream');
  response.setHeader('Content-Length', info.size);
  response.setHeader('Cache-Control', file.endsWith('.html') ? 'no-store' : 'no-cache');
  if (headOnly) {
    response.end();
    return;
  }
  await new Promise<void>((done, fail) => {
    const stream = createReadStream(file);
    stream.on('error', fail);
    response.on('close', () => {
      stream.destroy();
      done();
    });
    stream.pipe(response);
  });
}
