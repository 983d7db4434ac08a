import { type Flags, UsageError } from '../../lib/flags.ts';

/**
 * Flags specific to the buyer commands (the server URL rule); the command-flag helpers they share
 * with `isocast replay` are in src/lib/flags.ts and re-exported here for the buyer's modules.
 */
export { intFlag, parseFlags, requireValue, UsageError, type Flags } from '../../lib/flags.ts';
export type { CommandFlagSpec as FlagSpec } from '../../lib/flags.ts';

/** Hosts a plain-http connection may reach without --insecure: this machine only. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * The one message for a --server that is not an http(s) URL, with the likely fix: `localhost:8402`
 * (which URL parsing reads as the scheme `localhost:`) becomes `http://localhost:8402`, another host
 * `https://...`.
 */
function serverUrlProblem(raw: string, name = '--server'): string {
  const bare = raw.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const host = bare.split(/[/:]/)[0] ?? '';
  const guess = `${isLoopback(host) ? 'http' : 'https'}://${bare}`;
  return `${name} must be an absolute http(s) URL, got ${raw}; did you mean ${guess}?`;
}

/**
 * `http(s)://host:port` without a trailing slash; anything else is a usage error. Plain http to
 * another machine would send payment headers and bearer receipts in the clear, so it needs
 * `--insecure` (the flag must be in the command's booleans). `--server` wins over ISOCAST_SERVER
 * (`envServer`), which wins over `fallback`.
 */
export function serverUrl(flags: Flags, fallback: string, envServer?: string): string {
  const fromEnv = flags.values.server === undefined && !!envServer;
  const raw = flags.values.server ?? (envServer || fallback);
  let u: URL | null = null;
  try {
    u = new URL(raw);
  } catch {}
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname)
    throw new UsageError(serverUrlProblem(raw, fromEnv ? 'ISOCAST_SERVER' : '--server'));
  if (u.protocol === 'http:' && !isLoopback(u.hostname) && !flags.on.has('insecure')) {
    throw new UsageError(
      `refusing plain http to ${u.host}: payments and receipt tokens would cross the network unencrypted. ` +
        'Use https, or pass --insecure if you really mean it',
    );
  }
  return raw.replace(/\/+$/, '');
}
