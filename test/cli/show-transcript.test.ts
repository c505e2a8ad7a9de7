import { afterAll, describe, expect, it } from 'vitest';
import { DiskSessionStore, reinSessionsDirectory } from '../../src/index.ts';
import { missingPhrase, transcriptCases } from '../transcript/transcript-cases.ts';
import { runRein, sandbox } from './rein-process.ts';

// `rein show` over every log of the shared transcript table, spawned as a user runs it.
describe('rein show renders the shared transcript table', () => {
  const box = sandbox();
  afterAll(() => box.cleanup());

  transcriptCases.forEach((testCase, index) => {
    it(testCase.name, async () => {
      const store = new DiskSessionStore({ root: reinSessionsDirectory(box.home) });
      const id = `table-${index}`;
      await store.release(await store.create({ id, cwd: box.root }, { seed: await testCase.log() }));
      const shown = await runRein(['show', id], { cwd: box.root, env: box.env });
      expect(shown.stderr).toBe('');
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`session ${id}`);
      expect(missingPhrase(shown.stdout, testCase.items)).toBeUndefined();
    });
  });
});
