import { HarnessError } from '../../llm/index.ts';

/** The stable codes of compaction failures. */
export type CompactionErrorCode =
  | 'INVALID_COMPACTION_OPTIONS'
  | 'NO_CONTEXT_WINDOW'
  | 'NO_ROUTE'
  | 'COMPACTION_LOCKED'
  | 'INVALID_RANGE'
  | 'SURFACE_CHANGED'
  | 'SUMMARY_EMPTY'
  | 'SUMMARY_TRUNCATED'
  | 'SUMMARY_NOT_SMALLER'
  | 'STILL_OVER_THRESHOLD'
  | 'WRONG_PHASE';

/** A compaction failure with a stable code (model failures during summarization stay LlmErrors). */
export class CompactionError extends HarnessError {
  constructor(code: CompactionErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'CompactionError';
  }
}
