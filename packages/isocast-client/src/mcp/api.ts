import { serverErrorText } from '../receipts.ts';
import { stripControlsDeep } from '../sanitize.ts';

/**
 * The MCP server's HTTP calls to isocast: every one has a timeout, answers come back as status +
 * JSON. `raw` is the body as sent (the challenge checks refuse control characters in it); `body`
 * has every string stripped of them, so whatever reaches the agent from it is plain text.
 */
export type Answer = {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a server's JSON; each tool checks the fields it reads
  body: Record<string, any>;
  raw: unknown;
  retryAfterS: number | null;
};

/** A failure the agent sees as the tool's error text (isError), worded for a person. */
export class ToolFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolFailure';
  }
}

export type Api = {
  server: string;
  call(
    method: 'GET' | 'POST',
    path: string,
    opts?: { headers?: Record<string, string>; timeoutMs?: number },
  ): Promise<Answer>;
};

export function createApi(server: string, fetchImpl: typeof fetch = fetch): Api {
  return {
    server,
    async call(method, path, opts = {}) {
      const timeoutMs = opts.timeoutMs ?? 15_000;
      let res: Response;
      let text: string;
      try {
        res = await fetchImpl(server + path, {
          method,
          headers: { accept: 'application/json', ...opts.headers },
          signal: AbortSignal.timeout(timeoutMs),
          redirect: 'error',
        });
        text = await res.text();
      } catch (err) {
        const why = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : rootCause(err);
        throw new ToolFailure(`cannot reach ${server} (${why}); is ISOCAST_SERVER right and the server running?`);
      }
      let raw: unknown = null;
      try {
        raw = JSON.parse(text);
      } catch {}
      const isObject = raw !== null && typeof raw === 'object' && !Array.isArray(raw);
      const body = isObject ? stripControlsDeep(raw as Answer['body']) : { error: text.slice(0, 200) };
      const retry = Number(res.headers.get('retry-after'));
      return { status: res.status, body, raw, retryAfterS: Number.isFinite(retry) && retry > 0 ? retry : null };
    },
  };
}

/** The most specific reason in a fetch failure chain: `ECONNREFUSED`, `ENOTFOUND`... (the isocast CLI's too). */
export function rootCause(err: unknown): string {
  let e: unknown = err;
  for (let i = 0; i < 5 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return err instanceof Error ? err.message : String(err);
}

/** The server's own words for a failed answer: `error` plus `reason`, no control characters. */
export function failureOf(what: string, a: Answer): ToolFailure {
  return new ToolFailure(`${what}: HTTP ${a.status}: ${serverErrorText(a.status, a.body)}`);
}
