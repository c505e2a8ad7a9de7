/** What a `ReinHarness` warning is about, to route on (never on the message text). */
export type ReinWarningCode =
  /** The `sandbox` approval mode cannot run here (no `bwrap`, or no namespaces): Rein fell back to `ask`. */
  | 'SANDBOX_UNAVAILABLE'
  /** The config file could not be read or is invalid, and a read-only command went on without it. */
  | 'CONFIG_IGNORED'
  /** The config file has a key Rein does not read (a misspelling, usually). */
  | 'CONFIG_UNKNOWN_KEY';

/** Which part of the composition a warning comes from. */
export type ReinWarningSource = 'sandbox' | 'config';

/** Something about how the harness was composed that the user must be told on every start. */
export interface ReinWarning {
  readonly code: ReinWarningCode;
  readonly source: ReinWarningSource;
  /** What happened and what to do, for a person; without a `warning:` prefix. */
  readonly message: string;
  /** A safety guarantee is off (the sandbox fell back to asking): front ends print it in capitals. */
  readonly loud: boolean;
}

/** A warning as one line for a terminal or a log: `WARNING: …` when loud, else `warning: …`. */
export function reinWarningLine(warning: ReinWarning): string {
  return `${warning.loud ? 'WARNING' : 'warning'}: ${warning.message}`;
}
