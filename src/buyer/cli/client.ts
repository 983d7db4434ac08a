import { httpRequest, retryAfterMs } from '../../lib/http-client.ts';
import { UpstreamError } from '../../lib/errors.ts';
import { serverErrorText, stripControls, stripControlsDeep } from '../../../packages/isocast-client/src/index.ts';

/**
 * The HTTP side of the buyer commands. Every call has a timeout (lib/http-client.ts); answers
 * come back as status + JSON, and the commands decide what each status means for the user.
 * `raw` is the body exactly as sent (for the challenge checks, which refuse control characters);
 * `body` has every string stripped of them, so whatever a command prints from it is safe.
 */
export type ApiAnswer = {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a server's JSON; each command checks the fields it reads
  body: Record<string, any>;
  raw: unknown;
  retryAfterMs: number | null;
  headers: Headers;
};

export class NetworkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NetworkError';
  }
}

export type Client = {
  server: string;
  request(
    method: 'GET' | 'POST',
    path: string,
    opts?: { headers?: Record<string, string>; body?: unknown; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<ApiAnswer>;
};

/** The most specific reason in a fetch failure chain: `ECONNREFUSED`, `ENOTFOUND`, `bad port`... */
function rootCause(err: unknown): string {
  let e: unknown = err;
  let message = err instanceof Error ? err.message : String(err);
  for (let i = 0; i < 5 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if (e instanceof Error && e.message) message = e.message;
    e = (e as { cause?: unknown }).cause;
  }
  return message;
}

export function createClient(server: string, timeoutMs = 15_000): Client {
  return {
    server,
    async request(method, path, opts = {}) {
      let res: Awaited<ReturnType<typeof httpRequest>>;
      try {
        res = await httpRequest({
          upstream: 'isocast',
          url: server + path,
          method,
          headers: opts.headers,
          body: opts.body,
          timeoutMs: opts.timeoutMs ?? timeoutMs,
          signal: opts.signal,
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
      return { status: res.status, body, raw: res.json, retryAfterMs: retryAfterMs(res.headers), headers: res.headers };
    },
  };
}

/** `error` plus `reason` when the server gave one, for messages. */
export function serverError(a: ApiAnswer): string {
  return serverErrorText(a.status, a.body);
}
