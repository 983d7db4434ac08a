import { Agent as HttpAgent, request as plainRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as tlsRequest } from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { UpstreamError } from './errors.ts';
import { splitCredentials } from './url-credentials.ts';

/**
 * One HTTP exchange on keep-alive agents under a connect-to-last-byte deadline, without fetch's
 * per-call objects (a measurable part of a paid request's CPU). What an error means for money is
 * the caller's: a POST whose answer did not arrive may have been acted on.
 */

/** Idle sockets close before common servers' 5 s keep-alive (undici's default is the same 4 s). */
const IDLE_SOCKET_MS = 4_000;
export const agentOptions = {
  keepAlive: true,
  timeout: IDLE_SOCKET_MS,
  maxFreeSockets: 32,
  scheduling: 'lifo',
} as const;
/** Larger than any x402 answer. */
const MAX_JSON_POST_BYTES = 1 << 20;

/** Where one request goes, taken apart once (a JSON client's base is parsed once, not per call). */
type Place = { tls: boolean; hostname: string; port: number | undefined; path: string };
export type Target = Place & { method: 'GET' | 'POST'; headers: Record<string, string>; payload: string };

export function placeOf(url: URL): Place {
  return {
    tls: url.protocol === 'https:',
    // URL keeps IPv6 literals bracketed; the socket layer wants them bare.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
  };
}
export type Limits = { upstream: string; timeoutMs: number; maxBytes: number; signal?: AbortSignal };
type Raw = { status: number; headers: IncomingHttpHeaders; text: string };
type Agents = { http: HttpAgent; https: HttpsAgent };

/** One request and its whole answer; `fail` ends it (a deadline, an abort) and is idempotent. */
export function exchange(
  t: Target,
  lim: Limits,
  agents: Agents,
): { done: Promise<Raw>; fail(err: UpstreamError): void } {
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

/** Runs `work` under the deadline and the caller's abort signal, with the messages fetch gave. */
export async function bounded<T>(lim: Limits, work: (watch: (f: (err: UpstreamError) => void) => void) => Promise<T>) {
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
    return await work((f) => {
      current = f;
      if (stopped) f(stopped);
    });
  } finally {
    clearTimeout(timer);
    lim.signal?.removeEventListener('abort', onAbort);
  }
}

export function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((h) => h.toLowerCase() === name);
}

/** `text`: the raw body (a refusal's reason or a transaction hash may be in a body that is not JSON). */
export type JsonAnswer = { status: number; json: unknown; text: string };
type JsonPost = (path: string, body: unknown, timeoutMs: number) => Promise<JsonAnswer>;
type JsonGet = (path: string, timeoutMs: number) => Promise<JsonAnswer>;
/** Headers made per request (a per-request JWT) from method, host and full path. */
export type PerRequestHeaders = (method: 'GET' | 'POST', host: string, path: string) => Promise<Record<string, string>>;

/** The cause code of an error raised before the request was sent (its headers could not be made). */
export const NOT_SENT = 'ERR_REQUEST_NOT_SENT';

/** Where a JSON client sends: the base URL (credentials in it become Basic auth), headers on every request, and those made per request. */
type JsonPostTarget = {
  baseUrl: string;
  headers?: Record<string, string>;
  perRequest?: PerRequestHeaders;
};

/** One request: the path under the base URL, the JSON body (POST) and the deadline of the whole exchange. */
type Call = { method: 'GET' | 'POST'; path: string; body: unknown; timeoutMs: number };

/** A JSON client for one base URL: no redirects (a payment endpoint that moves is misconfigured). */
export function createJsonPost(
  upstream: string,
  target: JsonPostTarget,
): { post: JsonPost; get: JsonGet; close(): void } {
  const { perRequest } = target;
  const { url: plain, authorization } = splitCredentials(target.baseUrl.replace(/\/+$/, ''));
  const base = new URL(plain);
  const agent = base.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const agents = { http: agent as HttpAgent, https: agent as HttpsAgent };
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/json',
    ...target.headers,
  };
  if (authorization && !hasHeader(headers, 'authorization')) headers.authorization = authorization;
  const prefix = base.pathname === '/' ? '' : base.pathname;
  // The empty path is the base URL itself, query included (a JSON-RPC endpoint's key may be there).
  const pathOf = (path: string) => (path === '' ? `${base.pathname}${base.search}` : `${prefix}${path}`);
  const { tls, hostname, port } = placeOf(base);
  const { 'content-type': _, ...getHeaders } = headers;

  const call = async ({ method, path, body, timeoutMs }: Call) => {
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
      payload: method === 'POST' ? JSON.stringify(body) : '',
    };
    const lim: Limits = { upstream, timeoutMs, maxBytes: MAX_JSON_POST_BYTES };
    const r = await bounded(lim, (watch) => {
      const ex = exchange(t, lim, agents);
      watch(ex.fail);
      return ex.done;
    });
    return { status: r.status, json: parseJson(r.text), text: r.text };
  };

  return {
    post: (path, body, timeoutMs) => call({ method: 'POST', path, body, timeoutMs }),
    get: (path, timeoutMs) => call({ method: 'GET', path, body: undefined, timeoutMs }),
    close: () => agent.destroy(),
  };
}
