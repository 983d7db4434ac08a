import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { UpstreamError } from '../../lib/errors.ts';
import { splitCredentials } from '../../lib/url-credentials.ts';

/**
 * A JSON client for one base URL (the facilitator), on node:http(s) with its own keep-alive
 * agent: no fetch Request, Response, Headers or AbortSignal per call, which were a measurable
 * part of a paid request's CPU (docs/performance.md). Every call has a deadline covering the
 * whole exchange, connect to last body byte, as AbortSignal.timeout did with fetch; errors are
 * UpstreamErrors with the messages the fetch client used. What an error means for money is the
 * caller's to decide: a POST whose answer did not arrive may have been acted on.
 */
/** `text`: the raw body (a refusal's reason or a transaction hash may be in a body that is not JSON). */
export type JsonAnswer = { status: number; json: unknown; text: string };
export type JsonPost = (path: string, body: unknown, timeoutMs: number) => Promise<JsonAnswer>;
export type JsonGet = (path: string, timeoutMs: number) => Promise<JsonAnswer>;
/**
 * Headers made for each request (a per-request JWT, settlers/cdp-auth.ts), from the method, the
 * host (with a port when the URL has one) and the full path the request goes to.
 */
export type PerRequestHeaders = (method: 'GET' | 'POST', host: string, path: string) => Promise<Record<string, string>>;

/** The cause code of an error raised before the request was sent (its headers could not be made). */
export const NOT_SENT = 'ERR_REQUEST_NOT_SENT';

/** Larger than any x402 answer; a facilitator sending more is broken, not slow. */
const MAX_BODY_BYTES = 1 << 20;
/** Idle sockets close before common servers' 5 s keep-alive (undici's default is the same 4 s). */
const IDLE_SOCKET_MS = 4_000;

/** Where the client sends: the base URL (credentials in it become Basic auth), headers on every request, and those made per request. */
export type JsonPostTarget = {
  baseUrl: string;
  headers?: Record<string, string>;
  perRequest?: PerRequestHeaders;
};

/** One request: the path under the base URL, the JSON body (POST) and the deadline of the whole exchange. */
type Call = { method: 'GET' | 'POST'; path: string; body: unknown; timeoutMs: number };

export function createJsonPost(
  upstream: string,
  target: JsonPostTarget,
): { post: JsonPost; get: JsonGet; close(): void } {
  const { perRequest } = target;
  const { url: plain, authorization } = splitCredentials(target.baseUrl.replace(/\/+$/, ''));
  const base = new URL(plain);
  const tls = base.protocol === 'https:';
  const agent = tls
    ? new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, maxFreeSockets: 32, scheduling: 'lifo' })
    : new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, maxFreeSockets: 32, scheduling: 'lifo' });
  const send = tls ? httpsRequest : httpRequest;
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/json',
    ...target.headers,
  };
  if (authorization && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization'))
    headers.authorization = authorization;
  const prefix = base.pathname === '/' ? '' : base.pathname;
  // The empty path is the base URL itself, query included (a JSON-RPC endpoint's key may be there).
  const pathOf = (path: string) => (path === '' ? `${base.pathname}${base.search}` : `${prefix}${path}`);
  const port = base.port === '' ? undefined : Number(base.port);
  // URL keeps IPv6 literals bracketed; the socket layer wants them bare.
  const hostname = base.hostname.replace(/^\[(.*)\]$/, '$1');

  const call = async (r: Call) => {
    let signed: Record<string, string> = {};
    try {
      if (perRequest) signed = await perRequest(r.method, base.host, pathOf(r.path));
    } catch (err) {
      // Nothing left this process: the caller may treat it like a refused connection.
      throw new UpstreamError(upstream, `request not sent: ${(err as Error).message}`, {
        cause: Object.assign(new Error('request not sent'), { code: NOT_SENT }),
      });
    }
    return exchange(r, signed);
  };

  const exchange = ({ method, path, body, timeoutMs }: Call, signed: Record<string, string>) =>
    new Promise<JsonAnswer>((resolve, reject) => {
      const payload = method === 'POST' ? JSON.stringify(body) : '';
      let settled = false;
      const fail = (err: UpstreamError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(err);
      };
      const req = send({
        agent,
        hostname,
        port,
        method,
        path: pathOf(path),
        headers:
          method === 'POST'
            ? { ...headers, ...signed, 'content-length': Buffer.byteLength(payload) }
            : { ...withoutContentType(headers), ...signed },
      });
      const timer = setTimeout(() => fail(new UpstreamError(upstream, `timed out after ${timeoutMs} ms`)), timeoutMs);
      req.on('error', (err) => fail(new UpstreamError(upstream, `request failed: ${err.message}`, { cause: err })));
      req.on('response', (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY_BYTES)
            fail(
              new UpstreamError(upstream, `body read failed: answer larger than ${MAX_BODY_BYTES} bytes`, {
                httpStatus: status,
              }),
            );
          else chunks.push(c);
        });
        res.on('error', (err) =>
          fail(new UpstreamError(upstream, `body read failed: ${err.message}`, { httpStatus: status, cause: err })),
        );
        res.on('close', () => {
          if (!res.complete)
            fail(new UpstreamError(upstream, 'body read failed: connection closed mid-answer', { httpStatus: status }));
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if (text.length > 0) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status, json, text });
        });
      });
      req.end(payload);
    });

  return {
    post: (path, body, timeoutMs) => call({ method: 'POST', path, body, timeoutMs }),
    get: (path, timeoutMs) => call({ method: 'GET', path, body: undefined, timeoutMs }),
    close: () => agent.destroy(),
  };
}

function withoutContentType(headers: Record<string, string>): Record<string, string> {
  const { 'content-type': _, ...rest } = headers;
  return rest;
}
