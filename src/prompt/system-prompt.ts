import type { Disposer, HookBus, WaterfallEvent } from '../hooks/index.ts';

/** One titled part of the system prompt; lower `order` renders first. */
export interface PromptSection {
  readonly id: string;
  readonly text: string;
  readonly order?: number;
}

/** What a section provider and the `system-prompt/assemble` waterfall know about the request. */
export interface PromptContext {
  readonly sessionId: string;
  readonly cwd: string | undefined;
  readonly instructions: string | undefined;
  readonly signal: AbortSignal;
}

/** Produces a section for a context, or nothing. */
export type PromptSectionProvider = (
  context: PromptContext,
) => PromptSection | undefined | Promise<PromptSection | undefined>;

declare module '../hooks/hook-event-map.ts' {
  interface HookEventMap {
    'system-prompt/assemble': WaterfallEvent<PromptContext, PromptSection[]>;
  }
}

/** The dispatch modes of the prompt events. */
export const promptEventModes = { 'system-prompt/assemble': 'waterfall' } as const;

/** The default base instructions of a Rein agent. */
export const defaultBaseInstructions =
  "You are a capable software agent working in the user's workspace through the tools you are given. " +
  'Read before you change things, keep changes minimal and explain what you did briefly.';

/**
 * Assembles the system prompt from registered section providers and the `system-prompt/assemble`
 * waterfall, then renders sections in order, separated by blank lines.
 */
export class SystemPromptAssembler {
  readonly #hooks: HookBus;
  readonly #providers = new Set<PromptSectionProvider>();
  readonly #base: string;

  constructor(options: { hooks: HookBus; baseInstructions?: string }) {
    this.#hooks = options.hooks;
    this.#base = options.baseInstructions ?? defaultBaseInstructions;
    this.#hooks.declare(promptEventModes);
  }

  /** Adds a section provider; returns its disposer. */
  addSection(provider: PromptSectionProvider): Disposer {
    this.#providers.add(provider);
    return () => {
      this.#providers.delete(provider);
    };
  }

  /** Collects every section for a context through the assemble waterfall. */
  async assemble(context: PromptContext): Promise<PromptSection[]> {
    return this.#hooks.waterfall(
      'system-prompt/assemble',
      context,
      async () => {
        const sections: PromptSection[] = [];
        if (this.#base !== '') sections.push({ id: 'base', text: this.#base, order: 0 });
        if (context.instructions !== undefined && context.instructions !== '') {
          sections.push({ id: 'agent-instructions', text: context.instructions, order: 10 });
        }
        for (const provider of this.#providers) {
          const section = await provider(context);
          if (section !== undefined && section.text !== '') sections.push(section);
        }
        return sections;
      },
      context.sessionId,
    );
  }

  /** Renders sections, ordered by `order` then insertion, joined by blank lines. */
  render(sections: readonly PromptSection[]): string {
    return sections
      .map((section, index) => ({ section, index }))
      .sort((a, b) => (a.section.order ?? 50) - (b.section.order ?? 50) || a.index - b.index)
      .map(({ section }) => section.text.trim())
      .filter((text) => text !== '')
      .join('\n\n');
  }
}
