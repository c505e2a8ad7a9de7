import { join } from 'node:path';
import { packageRoot } from '../package-root.ts';

/**
 * Where the UI sources (`web/src`, in a checkout only) and the built UI (`dist/web`, built by `npm run
 * build` and shipped in the package) live.
 */
export const webPaths = {
  get source(): string {
    return join(packageRoot(), 'web', 'src');
  },
  get dist(): string {
    return join(packageRoot(), 'dist', 'web');
  },
} as const;
