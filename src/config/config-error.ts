import { HarnessError } from '../llm/index.ts';

/** The codes of configuration failures. */
export type ConfigErrorCode =
  'INVALID_CONFIG' | 'INVALID_MODEL_ID' | 'UNKNOWN_PROVIDER' | 'UNKNOWN_MODEL' | 'MISSING_CREDENTIAL';

/** A configuration problem, with a message that says what to change. */
export class ConfigError extends HarnessError {
  declare readonly code: ConfigErrorCode;
  constructor(code: ConfigErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'ConfigError';
  }
}
