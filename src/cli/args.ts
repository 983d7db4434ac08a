import { type FlagSpec as SharedSpec, readFlags } from '../lib/flags.ts';

/**
 * Flags of the buyer commands, read by src/lib/flags.ts (the same reader as `serve`); any problem
 * is a UsageError carrying all of them, which the commands answer with exit code 2.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type FlagSpec = Pick<SharedSpec, 'strings' | 'booleans'>;

export type Flags = { values: Record<string, string>; on: Set<string> };

export function parseFlags(argv: readonly string[], spec: FlagSpec): Flags {
  const { values, on, problems } = readFlags(argv, spec);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return { values, on };
}

export function requireValue(flags: Flags, name: string): string {
  const v = flags.values[name];
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** A non-negative integer flag; `min` bounds it from below. */
export function intFlag(flags: Flags, name: string, fallback: number, min = 0): number {
  const raw = flags.values[name];
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < min) {
    throw new UsageError(`--${name} must be an integer of at least ${min}`);
  }
  return Number(raw);
}

/** Hosts a plain-http connection may reach without --insecure: this machine only. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * `http(s)://host:port` without a trailing slash; anything else is a usage error. Plain http to
 * another machine would send payment headers and bearer receipts in the clear, so it needs
 * `--insecure` (the flag must be in the command's booleans).
 */
export function serverUrl(flags: Flags, fallback: string): string {
  const raw = flags.values.server ?? fallback;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`--server must be an absolute http(s) URL, got ${raw}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`--server must be http or https, got ${raw}`);
  if (u.protocol === 'http:' && !isLoopback(u.hostname) && !flags.on.has('insecure')) {
    throw new UsageError(`refusing plain http to ${u.host}: payments and receipt tokens would cross the network unencrypted. `
      + 'Use https, or pass --insecure if you really mean it');
  }
  return raw.replace(/\/+$/, '');
}
