import { UpstreamError } from './errors.ts';
import { splitCredentials } from './url-credentials.ts';

/** Every outbound call goes through here so none can hang: a timeout is mandatory. */
export type HttpRequest = {
  upstream: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  /** Cancels the call early (a buyer's Ctrl-C during a long-poll); the timeout still applies. */
  signal?: AbortSignal;
};

export type HttpResponse = { status: number; headers: Headers; json: unknown; text: string };

export async function httpRequest(req: HttpRequest): Promise<HttpResponse> {
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  // fetch refuses user:pass@ URLs; config.ts lets them through only where they mean Basic auth.
  const { url, authorization } = splitCredentials(req.url);
  if (authorization && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization'))
    headers.authorization = authorization;
  let body: string | undefined;
  if (req.body !== undefined) {
    body = JSON.stringify(req.body);
    headers['content-type'] = 'application/json';
  }
  let res: Response;
  try {
    const timeout = AbortSignal.timeout(req.timeoutMs);
    const signal = req.signal ? AbortSignal.any([timeout, req.signal]) : timeout;
    res = await fetch(url, { method: req.method ?? 'GET', headers, body, signal });
  } catch (err) {
    const timedOut =
      err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError') && !req.signal?.aborted;
    throw new UpstreamError(
      req.upstream,
      timedOut ? `timed out after ${req.timeoutMs} ms` : `request failed: ${(err as Error).message}`,
      { cause: err },
    );
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw new UpstreamError(req.upstream, `body read failed: ${(err as Error).message}`, {
      httpStatus: res.status,
      cause: err,
    });
  }
  let json: unknown;
  if (text.length > 0) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** GET/POST expecting 2xx JSON; anything else is an UpstreamError carrying status and Retry-After. */
export async function httpJson(req: HttpRequest): Promise<unknown> {
  const res = await httpRequest(req);
  if (res.status < 200 || res.status > 299) {
    throw new UpstreamError(req.upstream, `HTTP ${res.status}`, {
      httpStatus: res.status,
      retryAfterMs: retryAfterMs(res.headers),
    });
  }
  if (res.json === undefined) throw new UpstreamError(req.upstream, 'response is not JSON', { httpStatus: res.status });
  return res.json;
}

export function retryAfterMs(headers: Headers): number | null {
  const v = headers.get('retry-after');
  if (!v) return null;
  const secs = Number(v);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}
