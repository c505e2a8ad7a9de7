import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySessionStore } from '../../src/index.ts';
import { DiskSessionStore } from '../../src/session/stores/index.ts';
import { describeStoreConformance } from './store-conformance.ts';

describeStoreConformance('MemorySessionStore', async (options) => ({
  store: new MemorySessionStore(options.pricing !== undefined ? { pricing: options.pricing } : {}),
  cleanup: async () => {
    // Nothing outlives the store object.
  },
}));

describeStoreConformance('DiskSessionStore', async (options) => {
  const directory = await mkdtemp(join(tmpdir(), 'rein-store-'));
  const root = join(directory, 'sessions');
  return {
    store: new DiskSessionStore({
      root,
      ...(options.pricing !== undefined ? { pricing: options.pricing } : {}),
    }),
    cleanup: () => rm(directory, { recursive: true, force: true }),
  };
});
