import type { ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';

/**
 * Request-path measures that bend the HTTP stack (figures: docs/performance.md items 7-9). Hono
 * answers synchronously only for a single-handler route; one `app.use('*')` would make every answer
 * a Promise, the node adapter's slow path. Removing them keeps the same bytes.
 */

/** Hono's body limit, run only for requests that declare a body (Content-Length > 0 or chunked). */
export function bodyLimitIfDeclared(limitBody: MiddlewareHandler): MiddlewareHandler {
  return (c, next) => {
    const h = c.req.raw.headers;
    const length = h.get('content-length');
    // HTTP/1.1: without Content-Length (or with 0) and without Transfer-Encoding there is no body.
    return (length === null || length === '0') && !h.has('transfer-encoding') ? next() : limitBody(c, next);
  };
}

/** The adapter's private slot `[status, body, headers]` on its lightweight Response, once seen. */
let cacheSlot: symbol | null = null;
function plainHeaderCache(res: Response): unknown[] | null {
  if (cacheSlot === null) {
    cacheSlot = Object.getOwnPropertySymbols(res).find((s) => s.description === 'cache') ?? null;
    if (cacheSlot === null) return null;
  }
  const cache = (res as unknown as Record<symbol, unknown>)[cacheSlot];
  if (!Array.isArray(cache)) return null;
  const h = cache[2];
  return h !== null && typeof h === 'object' && !(h instanceof Headers) && !Array.isArray(h) ? cache : null;
}

/** Adds `extra` to an answer (`out`: the node response); in-process, a route's own value wins. */
export function mergeHeaders(res: Response, extra: Record<string, string>, out: ServerResponse | undefined): Response {
  if (out) {
    const cache = plainHeaderCache(res);
    if (cache) cache[2] = { ...(cache[2] as Record<string, string>), ...extra };
    else for (const k in extra) out.setHeader(k, extra[k]!);
    return res;
  }
  for (const k in extra) if (!res.headers.has(k)) res.headers.set(k, extra[k]!);
  return res;
}

type Series = { observe(v: number): void };
type Timing = { req: Request; path: string; started: number };
type Fetch = (req: Request, env?: never, ctx?: never) => Response | Promise<Response>;

type WrapFetchDeps<Env> = {
  /** Bindings every request gets (the disclaimer); the node adapter's own are kept. */
  bindings: Env;
  /** The router's own `app.getPath`, so a percent-encoded spelling of a route is the route everywhere. */
  pathOf(req: Request, env: unknown): string;
  /** The route pattern for the metric label (bounded: `unmatched` for anything else). */
  routeOf(path: string): string;
  before(req: Request, path: string, env: unknown): Response | null;
  finish(res: Response, path: string, env: unknown): Response;
  series(method: string, route: string, status: number): Series;
};

export function wrapFetch<F extends Fetch, Env extends object>(dispatch: F, deps: WrapFetchDeps<Env>): F {
  // One series per (route, status, method), found through nested maps of values the request
  // already holds. Methods come from Node's fixed list, routes from ROUTE_DOCS: the maps stay small.
  const byRoute = new Map<string, Map<number, Map<string, Series>>>();
  const observe = (res: Response, { req, path, started }: Timing): Response => {
    const route = deps.routeOf(path);
    let byStatus = byRoute.get(route);
    if (!byStatus) {
      byStatus = new Map();
      byRoute.set(route, byStatus);
    }
    let byMethod = byStatus.get(res.status);
    if (!byMethod) {
      byMethod = new Map();
      byStatus.set(res.status, byMethod);
    }
    let series = byMethod.get(req.method);
    if (!series) {
      series = deps.series(req.method, route, res.status);
      byMethod.set(req.method, series);
    }
    series.observe((performance.now() - started) / 1000);
    return res;
  };
  const wrapped = (req: Request, env?: object, ctx?: unknown): Response | Promise<Response> => {
    const started = performance.now();
    const path = deps.pathOf(req, env);
    const at: Timing = { req, path, started };
    const early = deps.before(req, path, env);
    if (early) return observe(deps.finish(early, path, env), at);
    // The node adapter passes a fresh {incoming, outgoing} per request, so adding to it is safe;
    // app.request() in tests passes none.
    const bindings = env ? Object.assign(env, deps.bindings) : deps.bindings;
    const res = dispatch(req, bindings as never, ctx as never);
    return res instanceof Promise
      ? res.then((r) => observe(deps.finish(r, path, env), at))
      : observe(deps.finish(res, path, env), at);
  };
  return wrapped as unknown as F;
}
