import { Agent as HttpAgent, request as plainRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as tlsRequest } from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { UpstreamError } from './errors.ts';
import { splitCredentials } from './url-credentials.ts';

/**
 * The one HTTP client: each exchange on keep-alive agents under a connect-to-last-byte deadline,
 * without fetch's per-call objects (a measurable part of a paid request's CPU). httpRequest serves
 * every upstream but the payment endpoints (redirects as fetch, decompression); createJsonPost
 * serves those (one base URL, no redirects). What an error means for money is the caller's: a POST
 * whose answer did not arrive may have been acted on.
 */

/** Idle sockets close before common servers' 5 s keep-alive (undici's default is the same 4 s). */
const IDLE_SOCKET_MS = 4_000;
const agentOptions = {
  keepAlive: true,
  timeout: IDLE_SOCKET_MS,
  maxFreeSockets: 32,
  scheduling: 'lifo',
} as const;
/** Larger than any x402 answer. */
const MAX_JSON_POST_BYTES = 1 << 20;
/** Larger than any answer an upstream of ours sends; one sending more is broken, not slow. */
const MAX_BODY_BYTES = 64 << 20;
/** As fetch: redirects followed, at most this many. */
const MAX_REDIRECTS = 20;

/** Where one request goes, taken apart once (a JSON client's base is parsed once, not per call). */
type Place = { tls: boolean; hostname: string; port: number | undefined; path: string };
type Target = Place & { method: 'GET' | 'POST'; headers: Record<string, string>; payload: string };

function placeOf(url: URL): Place {
  return {
    tls: url.protocol === 'https:',
    // URL keeps IPv6 literals bracketed; the socket layer wants them bare.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
  };
}
type Limits = { upstream: string; timeoutMs: number; maxBytes: number; signal?: AbortSignal };
type Raw = { status: number; headers: IncomingHttpHeaders; text: string };
type Agents = { http: HttpAgent; https: HttpsAgent };

/** One request and its whole answer; `fail` ends it (a deadline, an abort) and is idempotent. */
function exchange(t: Target, lim: Limits, agents: Agents): { done: Promise<Raw>; fail(err: UpstreamError): void } {
  let fail: (err: UpstreamError) => void = () => undefined;
  const done = new Promise<Raw>((resolve, reject) => {
    let settled = false;
    const req = (t.tls ? tlsRequest : plainRequest)({
      agent: t.tls ? agents.https : agents.http,
      hostname: t.hostname,
      port: t.port,
      method: t.method,
      path: t.path,
      headers: t.method === 'POST' ? { ...t.headers, 'content-length': Buffer.byteLength(t.payload) } : t.headers,
    });
    fail = (err) => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(err);
    };
    const { upstream } = lim;
    req.on('error', (err) => fail(new UpstreamError(upstream, `request failed: ${err.message}`, { cause: err })));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const bodyFailed = (why: string, cause?: unknown) =>
        fail(new UpstreamError(upstream, `body read failed: ${why}`, { httpStatus: status, cause }));
      const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
      const decoder =
        encoding === 'gzip' || encoding === 'x-gzip'
          ? createGunzip()
          : encoding === 'deflate'
            ? createInflate()
            : encoding === 'br'
              ? createBrotliDecompress()
              : null;
      const body: Readable = decoder ? res.pipe(decoder) : res;
      decoder?.on('error', (err) => bodyFailed(err.message, err));
      const chunks: Buffer[] = [];
      let size = 0;
      body.on('data', (c: Buffer) => {
        size += c.length;
        if (size > lim.maxBytes) bodyFailed(`answer larger than ${lim.maxBytes} bytes`);
        else chunks.push(c);
      });
      res.on('error', (err) => bodyFailed(err.message, err));
      res.on('close', () => {
        if (!res.complete) bodyFailed('connection closed mid-answer');
      });
      body.on('end', () => {
        if (settled) return;
        settled = true;
        resolve({ status, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.end(t.method === 'POST' ? t.payload : undefined);
  });
  return { done, fail };
}

/** Runs `work`'s exchanges under one deadline and the caller's abort signal, with the messages fetch gave. */
async function bounded<T>(lim: Limits, agents: Agents, work: (send: (t: Target) => Promise<Raw>) => Promise<T>) {
  let current: ((err: UpstreamError) => void) | null = null;
  let stopped: UpstreamError | null = null;
  const stop = (err: UpstreamError) => {
    stopped ??= err;
    current?.(err);
  };
  const timer = setTimeout(
    () => stop(new UpstreamError(lim.upstream, `timed out after ${lim.timeoutMs} ms`)),
    lim.timeoutMs,
  );
  const onAbort = () => {
    const cause = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    stop(new UpstreamError(lim.upstream, 'request failed: This operation was aborted', { cause }));
  };
  if (lim.signal?.aborted) onAbort();
  lim.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await work((t) => {
      const ex = exchange(t, lim, agents);
      current = ex.fail;
      if (stopped) ex.fail(stopped);
      return ex.done;
    });
  } finally {
    clearTimeout(timer);
    lim.signal?.removeEventListener('abort', onAbort);
  }
}

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** user:pass@ in a URL is sent as Basic auth unless the caller set its own (config.ts lets it through only where it means that). */
function withCredentials(headers: Record<string, string>, rawUrl: string): string {
  const { url, authorization } = splitCredentials(rawUrl);
  if (authorization && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization'))
    headers.authorization = authorization;
  return url;
}

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

let sharedAgents: Agents | null = null;

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw))
    for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) h.append(k, one);
  return h;
}

export async function httpRequest(req: HttpRequest): Promise<HttpResponse> {
  sharedAgents ??= { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
  const headers: Record<string, string> = {
    accept: 'application/json',
    'accept-encoding': 'gzip, deflate, br',
    ...req.headers,
  };
  const url = withCredentials(headers, req.url);
  let payload = '';
  if (req.body !== undefined) {
    payload = JSON.stringify(req.body);
    headers['content-type'] = 'application/json';
  }
  const lim = { upstream: req.upstream, timeoutMs: req.timeoutMs, maxBytes: MAX_BODY_BYTES, signal: req.signal };
  const raw = await bounded(lim, sharedAgents, async (send) => {
    let at: URL;
    try {
      at = new URL(url);
    } catch (err) {
      throw new UpstreamError(req.upstream, `request failed: ${(err as Error).message}`, { cause: err });
    }
    let target: Target = { ...placeOf(at), method: req.method ?? 'GET', headers, payload };
    for (let hops = 0; ; hops++) {
      const r = await send(target);
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

/** `text`: the raw body (a refusal's reason or a transaction hash may be in a body that is not JSON). */
export type JsonAnswer = { status: number; json: unknown; text: string };
/** Headers made per request (a per-request JWT) from method, host and full path. */
export type PerRequestHeaders = (method: 'GET' | 'POST', host: string, path: string) => Promise<Record<string, string>>;

/** The cause code of an error raised before the request was sent (its headers could not be made). */
export const NOT_SENT = 'ERR_REQUEST_NOT_SENT';

/** A JSON client for one base URL (credentials in it become Basic auth): no redirects (a payment endpoint that moves is misconfigured). */
export function createJsonPost(
  upstream: string,
  target: { baseUrl: string; headers?: Record<string, string>; perRequest?: PerRequestHeaders },
) {
  const { perRequest } = target;
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/json',
    ...target.headers,
  };
  const base = new URL(withCredentials(headers, target.baseUrl.replace(/\/+$/, '')));
  const agent = base.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const agents = { http: agent as HttpAgent, https: agent as HttpsAgent };
  const prefix = base.pathname === '/' ? '' : base.pathname;
  // The empty path is the base URL itself, query included (a JSON-RPC endpoint's key may be there).
  const pathOf = (path: string) => (path === '' ? `${base.pathname}${base.search}` : `${prefix}${path}`);
  const { tls, hostname, port } = placeOf(base);
  const { 'content-type': _, ...getHeaders } = headers;

  const call = async (
    method: 'GET' | 'POST',
    path: string,
    { payload, timeoutMs }: { payload: string; timeoutMs: number },
  ) => {
    let signed: Record<string, string> = {};
    try {
      if (perRequest) signed = await perRequest(method, base.host, pathOf(path));
    } catch (err) {
      // Nothing left this process: the caller may treat it like a refused connection.
      throw new UpstreamError(upstream, `request not sent: ${(err as Error).message}`, {
        cause: Object.assign(new Error('request not sent'), { code: NOT_SENT }),
      });
    }
    const t: Target = {
      tls,
      hostname,
      port,
      path: pathOf(path),
      method,
      headers: method === 'POST' ? { ...headers, ...signed } : { ...getHeaders, ...signed },
      payload,
    };
    const r = await bounded({ upstream, timeoutMs, maxBytes: MAX_JSON_POST_BYTES }, agents, (send) => send(t));
    return { status: r.status, json: parseJson(r.text), text: r.text } satisfies JsonAnswer;
  };

  return {
    post: (path: string, body: unknown, timeoutMs: number) =>
      call('POST', path, { payload: JSON.stringify(body), timeoutMs }),
    /** `json` is the body's JSON text already (a facilitator body with its listing spliced in). */
    postJson: (path: string, json: string, timeoutMs: number) => call('POST', path, { payload: json, timeoutMs }),
    get: (path: string, timeoutMs: number) => call('GET', path, { payload: '', timeoutMs }),
    close: () => agent.destroy(),
  };
}
