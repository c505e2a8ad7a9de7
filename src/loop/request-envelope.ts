import type { LlmCallConfig, PreparedRoute, ToolSchema } from '../llm/index.ts';
import type { EpochHeader, Session } from '../session/index.ts';

/**
 * Logs `request/header` (a full snapshot on this driver's first request, then only on change) and
 * `request/context` (when the route or its capacity changes), comparing cheaply by identity first.
 */
export class RequestEnvelope {
  readonly #session: Session;
  #first = true;
  #lastHeaderJson: string | undefined;
  #lastSystem: string | undefined;
  #lastTools: readonly ToolSchema[] | undefined;
  #lastConfig: LlmCallConfig | undefined;
  #lastContext: string | undefined;

  constructor(session: Session) {
    this.#session = session;
    for (let seq = session.events.length - 1; seq >= 0; seq--) {
      const event = session.events[seq]!;
      if (event.type === 'request/context' && this.#lastContext === undefined) {
        this.#lastContext = JSON.stringify(event.data);
      }
      if (event.type === 'request/header') {
        this.#lastHeaderJson = JSON.stringify((event.data as { header: EpochHeader }).header);
        this.#lastConfig = (event.data as { header: EpochHeader }).header.config;
        break;
      }
    }
  }

  /** The config of the latest logged header, if any (what a resumed agent continues with). */
  get lastConfig(): LlmCallConfig | undefined {
    return this.#lastConfig;
  }

  /** Logs the header and context events this attempt needs, inside the open step. */
  record(
    config: LlmCallConfig,
    route: PreparedRoute | undefined,
    system: string,
    tools: readonly ToolSchema[],
  ): void {
    const unchanged =
      !this.#first &&
      system === this.#lastSystem &&
      tools === this.#lastTools &&
      this.#lastConfig !== undefined &&
      sameConfig(config, this.#lastConfig);
    if (!unchanged) {
      const header: EpochHeader = { config: canonicalConfig(config) };
      if (system !== '') header.system = system;
      if (tools.length > 0) header.tools = tools.map((tool) => ({ ...tool }));
      const json = JSON.stringify(header);
      if (this.#first || json !== this.#lastHeaderJson) {
        const reason = this.#first ? (this.#lastHeaderJson === undefined ? 'initial' : 'resume') : 'change';
        this.#session.append('request/header', { header, reason });
        this.#lastHeaderJson = json;
      }
      this.#first = false;
      this.#lastSystem = system;
      this.#lastTools = tools;
      this.#lastConfig = config;
    }
    const context: { provider: string; model: string; contextWindow?: number } = {
      provider: config.provider,
      model: config.model,
    };
    const window = route?.model?.contextWindow;
    if (window !== undefined) context.contextWindow = window;
    const contextJson = JSON.stringify(context);
    if (contextJson !== this.#lastContext) {
      this.#session.append('request/context', context);
      this.#lastContext = contextJson;
    }
  }
}

function canonicalConfig(config: LlmCallConfig): LlmCallConfig {
  const out: LlmCallConfig = { provider: config.provider, model: config.model };
  if (config.reasoningEffort !== undefined) out.reasoningEffort = config.reasoningEffort;
  if (config.temperature !== undefined) out.temperature = config.temperature;
  if (config.maxTokens !== undefined) out.maxTokens = config.maxTokens;
  if (config.stop !== undefined && config.stop.length > 0) out.stop = [...config.stop];
  return out;
}

function sameConfig(a: LlmCallConfig, b: LlmCallConfig): boolean {
  return (
    a.provider === b.provider &&
    a.model === b.model &&
    a.reasoningEffort === b.reasoningEffort &&
    a.temperature === b.temperature &&
    a.maxTokens === b.maxTokens &&
    (a.stop ?? []).join('\u0000') === (b.stop ?? []).join('\u0000')
  );
}
