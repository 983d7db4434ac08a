/**
 * A configuration the process refuses, with every problem found in one run. Here rather than in
 * config.ts so the modules that build a backend from the settings (payments/backends.ts) can
 * refuse one without importing the wiring; `P` is the shape of the settings that did parse.
 */
export class ConfigError<P extends object = Record<string, unknown>> extends Error {
  readonly problems: string[];
  /** The variables that parsed, so a caller can add its own checks to the same report. */
  readonly partial: Partial<P>;
  constructor(problems: string[], partial: Partial<P> = {}) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
    this.partial = partial;
  }
}
