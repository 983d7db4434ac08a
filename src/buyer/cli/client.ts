import { httpRequest, retryAfterMs } from '../../lib/http-client.ts';
import { UpstreamError } from '../../lib/errors.ts';
import { type Flags, UsageError } from '../../lib/flags.ts';
import { stripControls, stripControlsDeep } from '../../../packages/isocast-client/src/index.ts';
import { type Answer, rootCause } from '../../../packages/isocast-client/src/mcp/api.ts';
import { DEFAULT_SERVER, isLoopback } from '../../../packages/isocast-client/src/mcp/config.ts';
import { CliError } from './output.ts';

/** isocast-mcp's Answer: `raw` as sent (the challenge checks refuse control characters), `body` stripped of them. */
export type ApiAnswer = Omit<Answer, 'retryAfterS'> & { retryAfterMs: number | null };

export class NetworkError extends CliError {
  override name = 'NetworkError';
}

export type Client = ReturnType<typeof createClient>;

/** A command's own flags and the four every command that asks a server takes. */
export const serverFlags = (strings: string[], booleans: string[] = []) => ({
  strings: [...strings, 'server', 'timeout'],
  booleans: [...booleans, 'json', 'insecure'],
});

/**
 * `--server`, else ISOCAST_SERVER, else DEFAULT_SERVER, as `http(s)://host:port`; the usage error names
 * the likely fix (`localhost:8402` parses as the scheme `localhost:`). Plain http to another machine
 * would send payment headers and receipt tokens in the clear, so it needs `--insecure`.
 */
export function serverUrl(flags: Flags, envServer?: string): string {
  const raw = flags.values.server ?? (envServer || DEFAULT_SERVER);
  let u: URL | null = null;
  try {
    u = new URL(raw);
  } catch {}
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) {
    const bare = raw.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
    const guess = `${isLoopback(bare.split(/[/:]/)[0] ?? '') ? 'http' : 'https'}://${bare}`;
    const name = flags.values.server === undefined && envServer ? 'ISOCAST_SERVER' : '--server';
    throw new UsageError(`${name} must be an absolute http(s) URL, got ${raw}; did you mean ${guess}?`);
  }
  if (u.protocol === 'http:' && !isLoopback(u.hostname) && !flags.on.has('insecure')) {
    throw new UsageError(
      `refusing plain http to ${u.host}: payments and receipt tokens would cross the network unencrypted. ` +
        'Use https, or pass --insecure if you really mean it',
    );
  }
  return raw.replace(/\/+$/, '');
}

type RequestOptions = { headers?: Record<string, string>; body?: unknown; timeoutMs?: number; signal?: AbortSignal };

export function createClient(server: string, timeoutMs = 15_000) {
  return {
    server,
    async request(method: 'GET' | 'POST', path: string, opts: RequestOptions = {}): Promise<ApiAnswer> {
      let res: Awaited<ReturnType<typeof httpRequest>>;
      try {
        res = await httpRequest({
          upstream: 'isocast',
          url: server + path,
          method,
          ...opts,
          timeoutMs: opts.timeoutMs ?? timeoutMs,
        });
      } catch (err) {
        if (err instanceof UpstreamError) {
          const why = /timed out/.test(err.message)
            ? `no answer within ${(opts.timeoutMs ?? timeoutMs) / 1000} s`
            : rootCause(err.cause ?? err);
          throw new NetworkError(
            `cannot reach ${server} (${why}); is the server running? Set it with --server <url> or ISOCAST_SERVER`,
          );
        }
        throw err;
      }
      const isObject = res.json && typeof res.json === 'object' && !Array.isArray(res.json);
      const body = isObject
        ? stripControlsDeep(res.json as ApiAnswer['body'])
        : { error: stripControls(res.text.slice(0, 200)) };
      return { status: res.status, body, raw: res.json, retryAfterMs: retryAfterMs(res.headers) };
    },
  };
}

export const unknownCity = (city: string) => `unknown city: ${city} (the list is at GET /v1/cities)`;

/** A refused answer in the buyer's words: the message for its status (with its exit code when not 1), else `fallback`. */
export function refusal(a: ApiAnswer, byStatus: Record<number, string | [string, number]>, fallback: string): CliError {
  const m = byStatus[a.status] ?? fallback;
  return typeof m === 'string' ? new CliError(m) : new CliError(m[0], m[1]);
}
