/** Configuration parsers instead of zod, whose first use cost about 3 ms of the binary's start (docs/performance.md). */
import { nearest } from './nearest.ts';

/** Every problem in one run; in lib so payments/backends.ts can refuse without importing the wiring. */
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

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

export type Field<T, Out = T | undefined> = {
  parse(raw: string): Parsed<T>;
  /** What an unset variable becomes (`undefined` when it is optional without a default). */
  unset(): Out;
  /** The literal default, for `isocast help config`. */
  defaultValue?: T;
  optional(): Field<T, T | undefined>;
  default(value: T): Field<T, T>;
  check(test: (value: T) => string | null): Field<T, Out>;
};

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = (problem: string): Parsed<never> => ({ ok: false, problem });

function field<T>(parse: (raw: string) => Parsed<T>): Field<T, T | undefined> {
  const make = <Out>(p: (raw: string) => Parsed<T>, unset: () => Out, defaultValue?: T): Field<T, Out> => ({
    parse: p,
    unset,
    defaultValue,
    optional: () => make<T | undefined>(p, () => undefined),
    default: (value: T) => make<T>(p, () => value, value),
    check: (test) =>
      make<Out>(
        (raw) => {
          const r = p(raw);
          if (!r.ok) return r;
          const problem = test(r.value);
          return problem === null ? r : bad(problem);
        },
        unset,
        defaultValue,
      ),
  });
  return make<T | undefined>(parse, () => undefined);
}

export const text = (): Field<string> => field((raw) => (raw.length > 0 ? ok(raw) : bad('must not be empty')));

export const matching = (re: RegExp, problem: string): Field<string> =>
  field((raw) => (re.test(raw) ? ok(raw) : bad(problem)));

export function oneOf<const V extends string>(values: readonly V[]): Field<V> {
  const allowed = new Set<string>(values);
  return field((raw) => {
    if (allowed.has(raw)) return ok(raw as V);
    // `"lve" is not one of mock, live; did you mean live?`: the value as given (cut short), and the nearest.
    const shown = raw.length > 40 ? `${raw.slice(0, 40)}...` : raw;
    const near = nearest(raw, values);
    return bad(`${JSON.stringify(shown)} is not one of ${values.join(', ')}${near ? `; did you mean ${near}?` : ''}`);
  });
}

export const flag = (): Field<boolean> =>
  field((raw) => {
    if (raw === 'true' || raw === '1' || raw === 'yes') return ok(true);
    if (raw === 'false' || raw === '0' || raw === 'no') return ok(false);
    return bad('must be one of true, false, 1, 0, yes, no');
  });

/** A number as JavaScript's Number() reads it (so ' 42 ' and '1e3' are numbers too). */
export const number = (): Field<number> =>
  field((raw) => {
    const n = Number(raw);
    return Number.isFinite(n) && raw.trim() !== '' ? ok(n) : bad('must be a number');
  });

export const intIn = (min: number, max: number): Field<number> =>
  number()
    .check((n) => (Number.isInteger(n) ? null : 'must be an integer'))
    .check((n) => (n < min ? `must be at least ${min}` : null))
    .check((n) => (n > max ? `must be at most ${max}` : null));

export const httpUrl = (): Field<string> =>
  field((raw) => {
    if (!URL.canParse(raw)) return bad('must be an absolute URL');
    if (!/^https?:\/\//.test(raw)) return bad('must be http(s)');
    return ok(raw.replace(/\/+$/, ''));
  });

/** Where Litestream streams the database: s3, sftp or a directory, the three Litestream 0.3.13 does and we test. */
const REPLICA_FORMS = 'must be s3://bucket/path, sftp://user@host/path, or an absolute directory path';
export const replicaUrl = (): Field<string> =>
  field((raw) => {
    if (raw.startsWith('/')) return ok(raw.replace(/\/+$/, '') || '/');
    const u = URL.parse(raw);
    if (u === null) return bad(REPLICA_FORMS);
    if (u.username !== '' && u.protocol !== 'sftp:') return bad('must not carry credentials');
    if (u.password !== '') return bad('must not carry a password (use REPLICA_SFTP_KEY_PATH)');
    if (u.search !== '' || u.hash !== '') return bad('must not have a query or fragment');
    const named = u.hostname !== '' && (u.protocol === 's3:' || (u.protocol === 'sftp:' && u.pathname.length > 1));
    const directory = u.protocol === 'file:' && u.hostname === '' && u.pathname.length > 1;
    return named || directory ? ok(raw.replace(/\/+$/, '')) : bad(REPLICA_FORMS);
  });

type Shape = Record<string, Field<unknown, unknown>>;
export type ShapeOutput<S extends Shape> = { [K in keyof S]: S[K] extends Field<unknown, infer Out> ? Out : never };

/** Every field, with every problem in one run (`NAME: problem`): fixing an env file should not take a restart per line. */
export function parseShape<S extends Shape>(
  shape: S,
  input: Record<string, string>,
): { value: ShapeOutput<S>; problems: string[]; bad: Set<string> } {
  const value: Record<string, unknown> = {};
  const problems: string[] = [];
  const bad = new Set<string>();
  for (const [key, f] of Object.entries(shape)) {
    const raw = input[key];
    const r = raw === undefined ? null : f.parse(raw);
    value[key] = r?.ok ? r.value : f.unset();
    if (r?.ok === false) {
      problems.push(`${key}: ${r.problem}`);
      bad.add(key);
    }
  }
  return { value: value as ShapeOutput<S>, problems, bad };
}
