/**
 * Keeps Node's fetch implementation (its internal undici, which loads node:http2 and node:tls
 * with it) out of the binary's start and out of every answer that does not need it: about a
 * third of the start's CPU before this (docs/performance.md, start-up).
 *
 * Node creates `Headers`, `Request` and `Response` on first touch of the global. @hono/node-server
 * touches all three while its module is evaluated (to subclass them and to link its lightweight
 * request and response classes to them), and again on every answer (`instanceof Headers`), so
 * the first request paid for undici even when the answer was a plain JSON object. Inside the
 * bundle only, two changes make that lazy:
 *
 *   1. The adapter's module is rewritten (`patchNodeServer`): its classes are linked to the real
 *      ones on first need (a real request or response built, request headers read), and it no
 *      longer replaces the global Request and Response at `serve()`.
 *   2. Instead, esbuild binds every free `Request` and `Response` in the bundle to the adapter's
 *      lightweight classes at build time (scripts/sea/fetch-classes.mjs, `inject`): what the
 *      global replacement did at run time, for the bundle's own code, while the real classes
 *      stay on globalThis for the adapter to link to. Free `Headers` becomes a facade that
 *      constructs real Headers and answers `instanceof` for a plain object without loading them.
 *
 * Each rewrite must match the adapter's text exactly once, or the build stops: a new version of
 * the adapter is then looked at again rather than patched blindly.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type EsbuildPlugin = NonNullable<import('tsup').Options['esbuildPlugins']>[number];

/** The adapter's module file the rewrites are written against. */
const ADAPTER = /[\\/]@hono[\\/]node-server[\\/]dist[\\/]index\.mjs$/;

/** The free `Request`, `Response` and `Headers` of the whole bundle (esbuild `inject`). */
export const FETCH_CLASSES_INJECT = join(import.meta.dirname, 'fetch-classes.mjs');

const PROLOGUE = `
let isocastLinked = false;
function IsocastUnlinkedBase() {}
/** Puts undici's classes under the adapter's own, loading undici (once). */
function isocastLink() {
\tif (isocastLinked) return;
\tisocastLinked = true;
\tObject.setPrototypeOf(RequestHeaders.prototype, globalThis.Headers.prototype);
\tObject.setPrototypeOf(Request$1, globalThis.Request);
\tObject.setPrototypeOf(Request$1.prototype, globalThis.Request.prototype);
\tObject.setPrototypeOf(Response$1, globalThis.Response);
\tObject.setPrototypeOf(Response$1.prototype, globalThis.Response.prototype);
}
/** \`x instanceof Response\` (undici's) without loading undici for a plain init object. */
function isocastIsFetchResponse(x) {
\tif (x === null || typeof x !== "object") return false;
\tconst proto = Object.getPrototypeOf(x);
\tif (proto === Object.prototype || proto === null) return false;
\tisocastLink();
\treturn x instanceof globalThis.Response;
}
`;

/** [what, exact text, replacement] */
const REWRITES: readonly [string, string, string][] = [
  ['Headers captured at load', 'const GlobalHeaders = globalThis.Headers;\n', ''],
  [
    'materializeHeaders default',
    'const materializeHeaders = (rawHeaders, HeadersCtor = GlobalHeaders) => {',
    'const materializeHeaders = (rawHeaders, HeadersCtor = globalThis.Headers) => {',
  ],
  ['request headers linked at load', 'Object.setPrototypeOf(RequestHeaders.prototype, GlobalHeaders.prototype);\n', ''],
  [
    'request headers built',
    'const newHeadersFromIncoming = (incoming) => globalThis.Headers === GlobalHeaders ? new RequestHeaders(incoming) : materializeHeaders(incoming.rawHeaders, globalThis.Headers);',
    // The bundle never replaces the global Headers, so the adapter's own check is always true.
    'const newHeadersFromIncoming = (incoming) => (isocastLink(), new RequestHeaders(incoming));',
  ],
  [
    'Request subclassed at load',
    'const GlobalRequest = global.Request;\nvar Request$1 = class extends GlobalRequest {\n\tconstructor(input, options) {\n',
    // super() looks the parent up when it runs: linked first, it is undici's Request.
    'var Request$1 = class extends IsocastUnlinkedBase {\n\tconstructor(input, options) {\n\t\tisocastLink();\n',
  ],
  ['Response captured at load', 'const GlobalResponse = global.Response;\n', ''],
  [
    'real response built',
    'return this[responseCache] ||= new GlobalResponse(this.#body, liveHeaders ? {',
    'return this[responseCache] ||= new (isocastLink(), globalThis.Response)(this.#body, liveHeaders ? {',
  ],
  ['response init check', 'if (init instanceof GlobalResponse) {', 'if (isocastIsFetchResponse(init)) {'],
  [
    'Response linked at load',
    'Object.setPrototypeOf(Response$1, GlobalResponse);\nObject.setPrototypeOf(Response$1.prototype, GlobalResponse.prototype);\n',
    '',
  ],
  [
    'globals replaced at serve()',
    'if (options.overrideGlobalObjects !== false && global.Request !== Request$1) {',
    // The bundle's free Request/Response are these classes already (FETCH_CLASSES_INJECT).
    'if (false) {',
  ],
  [
    'CloseEvent at load',
    'const CloseEvent = globalThis.CloseEvent ?? class extends Event {',
    // Node's CloseEvent comes from undici too. It is only built for a WebSocket upgrade, which
    // isocast never serves: the adapter's own stand-in (its fallback for older Nodes) is enough.
    'const CloseEvent = class extends Event {',
  ],
  [
    'exports',
    'export { RequestError, createAdaptorServer, getRequestListener, serve, upgradeWebSocket };',
    'export { RequestError, createAdaptorServer, getRequestListener, serve, upgradeWebSocket, Request$1 as IsocastLightRequest, Response$1 as IsocastLightResponse };',
  ],
];

export function patchNodeServer(source: string): string {
  let out = source;
  for (const [what, from, to] of REWRITES) {
    const at = out.indexOf(from);
    if (at < 0 || out.indexOf(from, at + from.length) >= 0)
      throw new Error(
        `@hono/node-server changed: "${what}" not found exactly once; review scripts/sea/lazy-fetch-classes.ts`,
      );
    out = out.slice(0, at) + to + out.slice(at + from.length);
  }
  if (/\bGlobal(Headers|Request|Response)\b/.test(out))
    throw new Error('@hono/node-server changed: a load-time global is still referenced after the rewrite');
  return PROLOGUE + out;
}

export const lazyFetchClasses: EsbuildPlugin = {
  name: 'isocast-lazy-fetch-classes',
  setup(b) {
    b.onLoad({ filter: ADAPTER }, (args) => ({
      contents: patchNodeServer(readFileSync(args.path, 'utf8')),
      loader: 'js',
    }));
  },
};
