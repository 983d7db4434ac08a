import type { IncomingMessage, ServerResponse } from 'node:http';
import { mergeHeaders } from './fast-path.ts';
import type { RouteDoc } from './route-doc.ts';

type Entry = { pattern: string; methods: string[] };

/** Route matching outside Hono's router, for the 405 methods and the metric label in the fetch wrapper. */
export function routeTable(docs: RouteDoc[]) {
  const byPath = new Map<string, Entry>();
  for (const d of docs) {
    const pattern = d.path.replace(/\{([^}]+)\}/g, ':$1');
    const entry = byPath.get(pattern) ?? { pattern, methods: [] };
    const method = d.method.toUpperCase();
    for (const m of method === 'GET' ? ['GET', 'HEAD'] : [method])
      if (!entry.methods.includes(m)) entry.methods.push(m);
    byPath.set(pattern, entry);
  }
  // Literal paths (nearly every request) are one map lookup; only parameterised ones need a regex.
  const exact = new Map<string, Entry>();
  const dynamic: { re: RegExp; entry: Entry }[] = [];
  for (const entry of byPath.values()) {
    if (!entry.pattern.includes(':')) {
      exact.set(entry.pattern, entry);
      if (entry.pattern !== '/') exact.set(entry.pattern + '/', entry);
      continue;
    }
    const source = entry.pattern
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&')))
      .join('/');
    dynamic.push({ re: new RegExp(`^${source}/?$`), entry });
  }
  const find = (path: string): Entry | undefined => exact.get(path) ?? dynamic.find((d) => d.re.test(path))?.entry;
  return {
    /** Methods documented for the path (GET implies HEAD); empty when no route matches. */
    allowed: (path: string): string[] => find(path)?.methods ?? [],
    /** The pattern (`/v1/cities/:slug`) or `unmatched`: a bounded label set whatever clients send. */
    label: (path: string): string => find(path)?.pattern ?? 'unmatched',
  };
}

type RouteTable = ReturnType<typeof routeTable>;

/** The path of an absolute request URL, without query or fragment. */
export function pathOf(url: string): string {
  const scheme = url.indexOf('://');
  const start = url.indexOf('/', scheme < 0 ? 0 : scheme + 3);
  return start < 0 ? '/' : /^[^?#]*/.exec(url.slice(start))![0];
}

/**
 * `path` is decoded, so `/%61dmin` is the operator route here too. CORS `*` grants a browser
 * nothing (no cookies); the operator routes get none, so a page elsewhere cannot read them.
 */
// x402 v2: PAYMENT-SIGNATURE pays, PAYMENT-REQUIRED and PAYMENT-RESPONSE answer; SIGN-IN-WITH-X reads.
// @x402/fetch also sends an Access-Control-Expose-Headers request header, so a browser asks for it.
const CORS_ALLOW_HEADERS =
  'X-Payment, PAYMENT-SIGNATURE, SIGN-IN-WITH-X, Access-Control-Expose-Headers, Authorization, Content-Type';
const CORS_EXPOSE_HEADERS = 'X-PAYMENT-RESPONSE, PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-Receipt-Token, Retry-After';
const PREFLIGHT_MAX_AGE_S = '86400';

export type NodeBindings = { incoming?: IncomingMessage; outgoing?: ServerResponse };

function isOperatorPath(path: string): boolean {
  return path === '/metrics' || path === '/admin' || path.startsWith('/admin/') || path.startsWith('/metrics/');
}

/** `limit`: a ready 429 when the client is over its address budget on a limited route, else null. */
export function createEdge(routes: RouteTable, limit: (req: Request, path: string, peer?: string) => Response | null) {
  const publicHeaders: Record<string, string> = {
    'x-content-type-options': 'nosniff',
    'access-control-allow-origin': '*',
    'access-control-expose-headers': CORS_EXPOSE_HEADERS,
  };
  const operatorHeaders: Record<string, string> = { 'x-content-type-options': 'nosniff' };

  return {
    /** An answer that replaces routing (redirect, preflight, 429), or null; `finish` adds the headers. */
    before(req: Request, path: string, env: NodeBindings | undefined): Response | null {
      if (path.length > 1 && path.endsWith('/')) {
        const canonical = path.replace(/\/+$/, '') || '/';
        if (routes.allowed(canonical).length > 0) {
          // `path` is decoded; the Location is the request's own (encoded) spelling, trimmed, so a
          // decoded CR/LF or space never reaches a header.
          const location = pathOf(req.url).replace(/\/+$/, '') || '/';
          const q = req.url.indexOf('?');
          return new Response(null, {
            status: 308,
            headers: { location: location + (q < 0 ? '' : req.url.slice(q)) },
          });
        }
      }
      if (req.method === 'OPTIONS' && !isOperatorPath(path)) {
        const allowed = routes.allowed(path);
        if (allowed.length > 0) {
          const methods = [...allowed, 'OPTIONS'].join(', ');
          return new Response(null, {
            status: 204,
            headers: {
              allow: methods,
              'access-control-allow-methods': methods,
              'access-control-allow-headers': CORS_ALLOW_HEADERS,
              'access-control-max-age': PREFLIGHT_MAX_AGE_S,
              vary: 'Access-Control-Request-Headers',
            },
          });
        }
      }
      return limit(req, path, env?.incoming?.socket?.remoteAddress);
    },
    finish: (res: Response, path: string, out: ServerResponse | undefined): Response =>
      mergeHeaders(res, isOperatorPath(path) ? operatorHeaders : publicHeaders, out),
  };
}
