import { HarnessError } from '../llm/index.ts';

/** Codes carried by tool error results. */
export type ToolErrorCode =
  | 'UNKNOWN_TOOL'
  | 'INVALID_ARGUMENTS'
  | 'ABORTED'
  | 'ABORTED_BEFORE_DISPATCH'
  | 'TOOL_DENIED'
  | 'TOOL_FAILED'
  | 'TOOL_OUTCOME_UNKNOWN'
  | 'TOOL_NOT_STARTED'
  | (string & {});

/** A tool failure with a stable code; tools throw it to give the model a typed error. */
export class ToolError extends HarnessError {
  constructor(code: ToolErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'ToolError';
  }
}
