import { Agent as HttpAgent, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { UpstreamError } from './errors.ts';
import {
  agentOptions,
  bounded,
  exchange,
  hasHeader,
  parseJson,
  placeOf,
  type Limits,
  type Target,
} from './http-exchange.ts';
import { splitCredentials } from './url-credentials.ts';

/**
 * The HTTP client for every upstream but the payment endpoints: redirects as fetch (up to 20,
 * credentials dropped across origins), decompression, one deadline over every hop.
 */
type HttpRequest = {
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

/** Larger than any answer an upstream of ours sends; one sending more is broken, not slow. */
const MAX_BODY_BYTES = 64 << 20;
/** As fetch: redirects followed, at most this many. */
const MAX_REDIRECTS = 20;

let sharedAgents: { http: HttpAgent; https: HttpsAgent } | null = null;

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (Array.isArray(v)) for (const one of v) h.append(k, one);
    else if (v !== undefined) h.set(k, v);
  }
  return h;
}

export async function httpRequest(req: HttpRequest): Promise<HttpResponse> {
  sharedAgents ??= { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
  const agents = sharedAgents;
  const headers: Record<string, string> = {
    accept: 'application/json',
    'accept-encoding': 'gzip, deflate, br',
    ...req.headers,
  };
  // user:pass@ in a URL is sent as Basic auth (config.ts lets it through only where it means that).
  const { url, authorization } = splitCredentials(req.url);
  if (authorization && !hasHeader(headers, 'authorization')) headers.authorization = authorization;
  let payload = '';
  if (req.body !== undefined) {
    payload = JSON.stringify(req.body);
    headers['content-type'] = 'application/json';
  }
  const lim: Limits = {
    upstream: req.upstream,
    timeoutMs: req.timeoutMs,
    maxBytes: MAX_BODY_BYTES,
    signal: req.signal,
  };
  const raw = await bounded(lim, async (watch) => {
    let at: URL;
    try {
      at = new URL(url);
    } catch (err) {
      throw new UpstreamError(req.upstream, `request failed: ${(err as Error).message}`, { cause: err });
    }
    let target: Target = { ...placeOf(at), method: req.method ?? 'GET', headers, payload };
    for (let hops = 0; ; hops++) {
      const ex = exchange(target, lim, agents);
      watch(ex.fail);
      const r = await ex.done;
      const location = r.headers.location;
      if (![301, 302, 303, 307, 308].includes(r.status) || !location) return r;
      if (hops >= MAX_REDIRECTS) throw new UpstreamError(req.upstream, 'request failed: redirect count exceeded');
      const next = new URL(location, at);
      // As fetch: a 303, or a 301/302 after a POST, becomes a GET; credentials stay on their origin.
      const toGet = r.status === 303 || (target.method === 'POST' && (r.status === 301 || r.status === 302));
      const kept = { ...target.headers };
      if (next.origin !== at.origin)
        for (const k of Object.keys(kept)) if (k.toLowerCase() === 'authorization') delete kept[k];
      if (toGet) delete kept['content-type'];
      at = next;
      target = {
        ...placeOf(next),
        method: toGet ? 'GET' : target.method,
        headers: kept,
        payload: toGet ? '' : target.payload,
      };
    }
  });
  return { status: raw.status, headers: toHeaders(raw.headers), json: parseJson(raw.text), text: raw.text };
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
