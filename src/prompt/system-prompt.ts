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
  assemble(context: PromptContext): Promise<PromptSection[]> {
    return this.#hooks.waterfall(
      'system-prompt/assemble',
      context,
      () => {
        const sections: PromptSection[] = [];
        if (this.#base !== '') sections.push({ id: 'base', text: this.#base, order: 0 });
        if (context.instructions !== undefined && context.instructions !== '') {
          sections.push({ id: 'agent-instructions', text: context.instructions, order: 10 });
        }
        // Without section providers the sections are ready now: no await, no extra tick per step.
        return this.#providers.size === 0 ? sections : this.#collect(context, sections);
      },
      context.sessionId,
    );
  }

  async #collect(context: PromptContext, sections: PromptSection[]): Promise<PromptSection[]> {
    for (const provider of this.#providers) {
      const section = await provider(context);
      if (section !== undefined && section.text !== '') sections.push(section);
    }
    return sections;
  }

  /** Renders sections, ordered by `order` then insertion, joined by blank lines. */
  render(sections: readonly PromptSection[]): string {
    // Sections usually arrive already in order; the sort (stable) runs only when they do not.
    let ordered = true;
    for (let index = 1; index < sections.length && ordered; index++) {
      ordered = (sections[index - 1]!.order ?? 50) <= (sections[index]!.order ?? 50);
    }
    const list = ordered ? sections : [...sections].sort((a, b) => (a.order ?? 50) - (b.order ?? 50));
    let text = '';
    for (const section of list) {
      const part = section.text.trim();
      if (part === '') continue;
      text = text === '' ? part : `${text}\n\n${part}`;
    }
    return text;
  }
}
