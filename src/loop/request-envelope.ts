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
  #lastContext: { provider: string; model: string; contextWindow?: number } | undefined;

  constructor(session: Session) {
    this.#session = session;
    const log = session.log;
    for (let seq = log.length - 1; seq >= 0; seq--) {
      const type = log.typeAt(seq);
      if (type !== 'request/context' && type !== 'request/header') continue;
      const event = log.at(seq)!;
      if (event.type === 'request/context' && this.#lastContext === undefined) {
        this.#lastContext = event.data as { provider: string; model: string; contextWindow?: number };
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
        this.#session.append('request/header', { header, reason }, { adopt: true });
        this.#lastHeaderJson = json;
      }
      this.#first = false;
      this.#lastSystem = system;
      this.#lastTools = tools;
      this.#lastConfig = config;
    }
    const window = route?.model?.contextWindow;
    const last = this.#lastContext;
    if (
      last === undefined ||
      last.provider !== config.provider ||
      last.model !== config.model ||
      last.contextWindow !== window
    ) {
      const context: { provider: string; model: string; contextWindow?: number } = {
        provider: config.provider,
        model: config.model,
      };
      if (window !== undefined) context.contextWindow = window;
      this.#lastContext = this.#session.append('request/context', context, { adopt: true }).data;
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
    sameStop(a.stop ?? noStop, b.stop ?? noStop)
  );
}

const noStop: readonly string[] = [];

function sameStop(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}
