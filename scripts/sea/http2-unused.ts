/**
 * Stands in for `node:http2` inside the single binary, for @hono/node-server only. isocast
 * serves HTTP/1.1 through node:http and never creates an HTTP/2 server, so no HTTP/2 request
 * object can exist; the adapter's only uses of the module are `instanceof Http2ServerRequest`
 * checks (always false here) and a constant inside an HTTP/2-only branch. Loading the real
 * module (and node:tls with it) cost the binary's start about 10 ms (docs/performance.md).
 */
// biome-ignore lint/complexity/noStaticOnlyClass: it must be a class, as the target of `instanceof`
export class Http2ServerRequest {
  static [Symbol.hasInstance](): boolean {
    return false;
  }
}

export const constants = { NGHTTP2_NO_ERROR: 0 } as const;
