/**
 * The physical ceiling: a bare Hono app on @hono/node-server that answers the given paths with
 * bytes captured from the real server (same body, same content type), doing nothing else. The
 * real server's figures are ratios against this process, measured in the same run.
 *
 * node scripts/bench/ceiling.ts '{"port":9000,"routes":{"/v1/signals":"bench/tmp/signals.json"}}'
 */
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';

const input = JSON.parse(process.argv[2] ?? '{}') as { port: number; routes: Record<string, string> };
const app = new Hono();
app.get('/health', (c) => c.text('ok'));
for (const [path, file] of Object.entries(input.routes)) {
  // Encoded once: the cheapest possible way to send these bytes, which is what a ceiling is.
  const body = readFileSync(file);
  app.get(
    path,
    () =>
      new Response(body, {
        headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
      }),
  );
}
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: input.port });
