import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { ROOT } from '../../scripts/build-binary.ts';
import { FETCH_CLASSES_INJECT, lazyFetchClasses, patchNodeServer } from '../../scripts/sea/lazy-fetch-classes.ts';

/**
 * The binary's lazy fetch classes (scripts/sea/lazy-fetch-classes.ts), bundled the way the binary
 * bundles them around a small Hono app and run: a plain answer leaves Node's undici unloaded, and
 * everything that needs the real classes (request headers, Hono's Headers, a body, a streamed
 * response) still works once it loads them.
 */
const APP = `
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
const undici = () => process.moduleLoadList.includes('NativeModule internal/deps/undici/undici');
const app = new Hono();
app.get('/plain', () => new Response(JSON.stringify({ ok: true }), { headers: { 'content-type': 'application/json' } }));
app.get('/undici', () => new Response(String(undici())));
app.get('/header', (c) => new Response(c.req.header('x-probe') ?? 'none'));
app.get('/hono-headers', (c) => { c.header('x-set', '1'); return c.json({ a: 1 }, 202); });
app.post('/echo', async (c) => new Response('got ' + (await c.req.text()), { status: 201 }));
app.get('/stream', () => new Response(new ReadableStream({ start(s) { s.enqueue(new TextEncoder().encode('streamed')); s.close(); } })));
app.get('/instances', () => {
  const r = new Response('x');
  return new Response(JSON.stringify({
    response: r instanceof Response,
    plainIsHeaders: {} instanceof Headers,
    realIsHeaders: new Headers() instanceof Headers,
    request: new Request('http://x/') instanceof Request,
  }));
});
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => process.stdout.write(info.port + '\\n'));
`;

test('the adapter rewrite applies to the installed @hono/node-server exactly', () => {
  const file = join(createRequire(join(ROOT, 'package.json')).resolve('@hono/node-server'), '..', 'index.mjs');
  const out = patchNodeServer(readFileSync(file, 'utf8'));
  assert.match(out, /IsocastLightResponse/);
  assert.throws(() => patchNodeServer(out), /@hono\/node-server changed/);
});

test('bundled like the binary: plain answers without undici, the rest with it', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, 'isocast-fetch-classes-');
  const entry = join(dir, 'app.ts');
  const bundle = join(dir, 'app.cjs');
  writeFileSync(entry, APP);
  const { build } = await import('esbuild');
  await build({
    entryPoints: [entry],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    nodePaths: [join(ROOT, 'node_modules')],
    plugins: [lazyFetchClasses],
    inject: [FETCH_CLASSES_INJECT],
    logLevel: 'error',
  });
  const child = spawn(process.execPath, [bundle], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill());
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`app exited with ${code}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const get = async (path: string, init?: RequestInit) => {
    const r = await fetch(base + path, init);
    return { status: r.status, headers: r.headers, text: await r.text() };
  };

  const plain = await get('/plain');
  assert.equal(plain.status, 200);
  assert.equal(plain.text, '{"ok":true}');
  assert.equal(plain.headers.get('content-type'), 'application/json');
  assert.equal((await get('/undici')).text, 'false', 'a plain answer must not load undici');

  assert.equal((await get('/header', { headers: { 'x-probe': 'seen' } })).text, 'seen');
  const hono = await get('/hono-headers');
  assert.equal(hono.status, 202);
  assert.equal(hono.headers.get('x-set'), '1');
  assert.equal(hono.text, '{"a":1}');
  const echo = await get('/echo', { method: 'POST', body: 'body' });
  assert.deepEqual([echo.status, echo.text], [201, 'got body']);
  assert.equal((await get('/stream')).text, 'streamed');
  assert.deepEqual(JSON.parse((await get('/instances')).text), {
    response: true,
    plainIsHeaders: false,
    realIsHeaders: true,
    request: true,
  });
  assert.equal((await get('/undici')).text, 'true');
});
