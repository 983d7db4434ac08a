import type { MiddlewareHandler } from 'hono';
import type { AppEnv, Ctx } from '../lib/http.ts';
import { primaryUnreachable, replicaLagging } from '../lib/api-errors.ts';
import type { NodeBindings } from '../lib/edge.ts';

/** Writes and paid reads go to the primary (it alone settles); inside the app, so the decoded path decides. */
type ReadNodeSettings = { primaryUrl: string; forwardTimeoutMs: number; maxLagMs: number; lagMs(): number | null };

/** Headers that describe one hop, not the message (RFC 9110 7.6.1), and what fetch recomputes. */
const HOP = new Set(
  'connection keep-alive proxy-connection transfer-encoding upgrade te trailer host content-length'.split(' '),
);

const paysInline = (h: Headers) => h.has('x-payment') || h.has('payment-signature');

export function readNodeMiddleware(s: ReadNodeSettings): MiddlewareHandler<AppEnv> {
  const primary = s.primaryUrl.replace(/\/+$/, '');
  return async (c, next) => {
    const method = c.req.method;
    const reads = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
    if (!reads || (c.req.path === '/v1/signals' && paysInline(c.req.raw.headers))) return forward(c as Ctx, primary, s);
    if (method !== 'OPTIONS' && c.req.path.startsWith('/v1/')) {
      const lag = s.lagMs();
      if (lag === null || lag > s.maxLagMs) throw replicaLagging(Math.max(1, Math.ceil(s.maxLagMs / 1000)), lag);
    }
    await next();
  };
}

async function forward(c: Ctx, primary: string, s: ReadNodeSettings): Promise<Response> {
  const req = c.req.raw;
  const url = new URL(req.url);
  const headers = new Headers();
  for (const [k, v] of req.headers) if (!HOP.has(k)) headers.set(k, v);
  // The primary's address limits then see the buyer, not this node (list readers in its TRUSTED_PROXIES).
  const peer = (c.env as NodeBindings | undefined)?.incoming?.socket.remoteAddress;
  if (peer) headers.set('x-forwarded-for', [req.headers.get('x-forwarded-for'), peer].filter(Boolean).join(', '));
  headers.set('x-forwarded-host', url.host);
  try {
    const res = await fetch(`${primary}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer(),
      redirect: 'manual',
      signal: AbortSignal.timeout(s.forwardTimeoutMs),
    });
    const out = new Headers(res.headers);
    // fetch has already decoded the body; its length is the decoded one.
    for (const h of ['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'])
      out.delete(h);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers: out });
  } catch (err) {
    throw primaryUnreachable((err as Error).name === 'TimeoutError' ? 'timeout' : 'connection failed');
  }
}
