import type { ReinHarness } from '../index.ts';
import { permissionModes, providerKeySettings } from '../internal.ts';
import type { ServerSettings } from '../server/index.ts';

/**
 * The settings panel: provider keys through the config module (never sent back), applied to the running
 * harness as soon as they are saved; and the approval mode.
 */
export function webSettings(
  harness: ReinHarness,
  env: Readonly<Record<string, string | undefined>>,
): ServerSettings {
  const keys = providerKeySettings(harness.home, env);
  return {
    async describe() {
      const described = await keys.describe();
      return {
        ...described,
        help: `${described.help} A saved key is used from the next request on, without a restart.`,
        approvalMode: harness.approvalMode,
        approvalModes: [...permissionModes],
      };
    },
    async setProviderKey(provider, key) {
      await keys.setProviderKey(provider, key);
      await harness.reloadProviders();
    },
  };
}
