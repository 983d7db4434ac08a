/**
 * What the free identifiers `Request`, `Response` and `Headers` mean inside the binary's bundle
 * (esbuild `inject`, scripts/sea/lazy-fetch-classes.ts explains why). The globals themselves are
 * left alone: they stay Node's own classes, loaded on first touch.
 */
import { IsocastLightRequest, IsocastLightResponse } from '@hono/node-server';

/** @hono/node-server's lightweight classes: what its serve() made the globals at run time. */
export { IsocastLightRequest as Request, IsocastLightResponse as Response };

/**
 * Headers without loading undici until a Headers object is needed: construction gives Node's own
 * Headers, and `instanceof` answers false for a plain object (a route's literal headers) at once.
 */
export class Headers {
  constructor(init) {
    // biome-ignore lint/correctness/noConstructorReturn: a real Headers, not an instance of this facade
    return new globalThis.Headers(init);
  }

  static [Symbol.hasInstance](x) {
    if (x === null || typeof x !== 'object') return false;
    const proto = Object.getPrototypeOf(x);
    if (proto === Object.prototype || proto === null) return false;
    return x instanceof globalThis.Headers;
  }
}
