import type { Hono } from 'hono';
import { readAssetText } from './assets.ts';
import { type AppEnv, replyJson } from './http.ts';

/** The page loads only what this instance serves. */
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** `public/<name>.html` at `path`, its css and js under `path/assets/`; read at start, so a bad binary fails here. */
export function serveStaticPage(
  app: Hono<AppEnv>,
  { path, name, headers }: { path: string; name: string; headers: Record<string, string> },
): void {
  const html = readAssetText(`public/${name}.html`);
  // A Map, not an object: `assets['constructor']` on an object is a function, not a 404.
  const assets = new Map<string, { body: string; type: string }>();
  for (const [ext, type] of [
    ['css', 'text/css'],
    ['js', 'text/javascript'],
  ])
    assets.set(`${name}.${ext}`, { body: readAssetText(`public/${name}.${ext}`), type: `${type}; charset=utf-8` });
  app.get(
    path,
    () =>
      new Response(html, {
        headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': PAGE_CSP, ...headers },
      }),
  );
  app.get(`${path}/assets/:file`, (c) => {
    const asset = assets.get(c.req.param('file'));
    if (asset === undefined) return replyJson(c, { error: 'not found' }, { status: 404 });
    return new Response(asset.body, { headers: { 'content-type': asset.type, ...headers } });
  });
}
