import type { ProviderConfigInputs } from './config/index.ts';
import { configuredModelInfo, defaultConfiguredModel, loadReinConfig } from './config/index.ts';
import { HarnessError, acceptsImages } from './llm/index.ts';
import { DemoProvider, demoModelId, demoProviderId } from './providers/demo/index.ts';
import { parseModelRoute, resolveReinHome } from './app-harness.ts';

/** The route an app harness starts on when nothing else is chosen: the option, `REIN_MODEL`, the config. */
export function chosenModel(model: string | undefined, inputs: ProviderConfigInputs): string | undefined {
  return present(model) ?? present(inputs.env?.REIN_MODEL) ?? defaultConfiguredModel(inputs);
}

/**
 * Whether the default route of an app harness composed with these options takes images, from the
 * configuration and the catalog alone (no harness is composed, no key is checked). False when the
 * configuration cannot be read or names a route Rein cannot parse: composing would fail there anyway.
 */
export async function defaultRouteTakesImages(options: {
  model?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  home?: string | undefined;
}): Promise<boolean> {
  const home = resolveReinHome(options.home, options.env);
  try {
    const inputs: ProviderConfigInputs = { env: options.env, config: await loadReinConfig(home) };
    const chosen = chosenModel(options.model, inputs);
    const route =
      chosen !== undefined ? parseModelRoute(chosen) : { provider: demoProviderId, model: demoModelId };
    const info =
      route.provider === demoProviderId
        ? new DemoProvider().describeModel(route.model)
        : configuredModelInfo(route.provider, route.model, inputs);
    return acceptsImages(info);
  } catch (error) {
    // A broken config or route is reported by the first session that composes a harness.
    if (error instanceof HarnessError) return false;
    throw error;
  }
}

function present(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value.trim() : undefined;
}
