import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { UpstreamError } from '../../lib/errors.ts';
import { splitCredentials } from '../../lib/url-credentials.ts';

/**
 * A JSON POST client for one base URL (the facilitator), on node:http(s) with its own keep-alive
 * agent: no fetch Request, Response, Headers or AbortSignal per call, which were a measurable
 * part of a paid request's CPU (docs/performance.md). Every call has a deadline covering the
 * whole exchange, connect to last body byte, as AbortSignal.timeout did with fetch; errors are
 * UpstreamErrors with the messages the fetch client used. What an error means for money is the
 * caller's to decide: a POST whose answer did not arrive may have been acted on.
 */
export type JsonAnswer = { status: number; json: unknown };
export type JsonPost = (path: string, body: unknown, timeoutMs: number) => Promise<JsonAnswer>;

/** Larger than any x402 answer; a facilitator sending more is broken, not slow. */
const MAX_BODY_BYTES = 1 << 20;
/** Idle sockets close before common servers' 5 s keep-alive (undici's default is the same 4 s). */
const IDLE_SOCKET_MS = 4_000;

export function createJsonPost(
  upstream: string,
  baseUrl: string,
  extraHeaders: Record<string, string>,
): { post: JsonPost; close(): void } {
  const { url: plain, authorization } = splitCredentials(baseUrl.replace(/\/+$/, ''));
  const base = new URL(plain);
  const tls = base.protocol === 'https:';
  const agent = tls
    ? new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, maxFreeSockets: 32, scheduling: 'lifo' })
    : new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, maxFreeSockets: 32, scheduling: 'lifo' });
  const send = tls ? httpsRequest : httpRequest;
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/json',
    ...extraHeaders,
  };
  if (authorization && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization'))
    headers.authorization = authorization;
  const prefix = base.pathname === '/' ? '' : base.pathname;
  const port = base.port === '' ? undefined : Number(base.port);
  // URL keeps IPv6 literals bracketed; the socket layer wants them bare.
  const hostname = base.hostname.replace(/^\[(.*)\]$/, '$1');

  const post: JsonPost = (path, body, timeoutMs) =>
    new Promise<JsonAnswer>((resolve, reject) => {
      const payload = JSON.stringify(body);
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
        method: 'POST',
        path: `${prefix}${path}`,
        headers: { ...headers, 'content-length': Buffer.byteLength(payload) },
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
          resolve({ status, json });
        });
      });
      req.end(payload);
    });

  return { post, close: () => agent.destroy() };
}
