import type { LlmRequest, LlmService, Message, TokenUsage, ToolSchema } from '../../llm/index.ts';
import { BlockAssembler, LlmError, createUserMessage } from '../../llm/index.ts';
import { CompactionError } from './compaction-error.ts';
import type { ModelRoute } from './session-lookups.ts';

/** The fixed instruction that follows the range in the summary call. */
export const summaryInstruction =
  'Stop here and write a summary of the conversation above; it will replace that part of the ' +
  'conversation, so anything you leave out is lost. Do not call tools. Cover: the goals and requests ' +
  'of the user, in their own words where it matters; decisions made and why; the files, commands, ' +
  'identifiers and values that were read, changed or found (with paths); errors met and how they were ' +
  'resolved; and what remains to be done, with the next step. Be concise and factual; write plain text.';

/** Opens the framed checkpoint text; the summary follows between the tags. */
export const summaryPreamble =
  'Earlier parts of this conversation were compacted to save context. The summary below replaces them.';

/** What one summary call is given. */
export interface SummaryInput {
  readonly target: ModelRoute;
  readonly system: string | undefined;
  readonly tools: readonly ToolSchema[] | undefined;
  readonly messages: readonly Message[];
  readonly maxTokens: number;
  readonly sessionId: string;
  readonly scope: string;
  readonly signal: AbortSignal;
}

/** A written summary and the facts of the call that wrote it. */
export interface SummaryOutput {
  readonly text: string;
  readonly provider: string;
  readonly model: string;
  readonly maxTokens: number;
  readonly usage: TokenUsage | undefined;
}

/**
 * Writes a summary with one direct model call (purpose `compaction`): the conversation's system prompt
 * and tools, the range, then the fixed instruction. Error, aborted and max-tokens finishes fail; only
 * text blocks are kept, and empty text or image output fails.
 */
export async function summarize(llm: LlmService, input: SummaryInput): Promise<SummaryOutput> {
  let route: ReturnType<LlmService['prepare']> | undefined;
  try {
    route = llm.prepare({ provider: input.target.provider, model: input.target.model });
  } catch (error) {
    // NO_ADAPTER is tolerated as in the loop: an llm/stream listener may still serve the route.
    if (!(error instanceof LlmError) || error.code !== 'NO_ADAPTER') throw error;
  }
  const modelCap = route?.model?.maxOutputTokens;
  const maxTokens = modelCap !== undefined ? Math.min(modelCap, input.maxTokens) : input.maxTokens;
  const request: LlmRequest = {
    ...(route?.config ?? input.target),
    maxTokens,
    messages: [
      ...input.messages,
      createUserMessage(summaryInstruction, { kind: 'plugin', plugin: 'compaction' }),
    ],
    ...(input.system !== undefined && input.system !== '' ? { system: input.system } : {}),
    ...(input.tools !== undefined && input.tools.length > 0 ? { tools: input.tools } : {}),
    sessionId: input.sessionId,
    purpose: 'compaction',
  };
  const stream = await llm.stream(Object.freeze(request), {
    signal: input.signal,
    route,
    scope: input.scope,
  });
  const assembler = new BlockAssembler();
  for await (const chunk of stream) assembler.push(chunk);
  const response = assembler.result();
  const finish = response.finish;
  if (finish.kind === 'error' || finish.kind === 'aborted') throw new LlmError(finish.failure);
  if (input.signal.aborted) throw new LlmError({ code: 'ABORTED', message: 'summary aborted' });
  if (finish.kind === 'max-tokens') {
    throw new CompactionError('SUMMARY_TRUNCATED', `the summary hit its ${maxTokens}-token output cap`);
  }
  if (response.content.some((block) => block.type === 'image')) {
    throw new CompactionError('SUMMARY_EMPTY', 'the summary call answered with an image');
  }
  const text = response.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('')
    .trim();
  if (text === '') throw new CompactionError('SUMMARY_EMPTY', 'the summary call answered with no text');
  return { text, provider: request.provider, model: request.model, maxTokens, usage: response.usage };
}

/** Frames a summary as the checkpoint text the model reads in place of the range. */
export function frameSummary(summary: string): string {
  return `${summaryPreamble}\n\n<compacted-summary>\n${summary}\n</compacted-summary>`;
}
