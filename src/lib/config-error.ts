/** Every problem in one run; here so backends (payments/backends.ts) can refuse without importing the wiring. */
export class ConfigError<P extends object = Record<string, unknown>> extends Error {
  readonly problems: string[];
  readonly partial: Partial<P>;
  constructor(problems: string[], partial: Partial<P> = {}) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
    this.partial = partial;
  }
}
