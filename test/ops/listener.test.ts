import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { openListener } from '../../src/ops/listener.ts';
import { StartRefused } from '../../src/db/files.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { disclaimerText } from '../../src/terms/terms.ts';
import { memoryLogger } from '../helpers/logger.ts';

/**
 * `serve` binds its listener first (src/ops/listener.ts): the socket that refused a taken port is
 * the one that serves, and a request accepted before the app exists waits for it.
 */
const settings = (port: number) => ({
  HOST: '127.0.0.1',
  PORT: port,
  MAX_CONNECTIONS_PER_ADDRESS: 4,
  TRUSTED_PROXIES: '',
  TERMS_URL: 'https://example.test/terms',
});

async function opened(t: { after(fn: () => Promise<void>): void }, port = 0) {
  const ops = { metrics: createMetrics(), logger: memoryLogger() };
  const listener = await openListener(settings(port), ops);
  t.after(
    () =>
      new Promise<void>((resolve) => {
        listener.server.closeAllConnections();
        listener.server.close(() => resolve());
      }),
  );
  return { ...listener, ...ops, port: (listener.server.address() as AddressInfo).port };
}

test('a request sent before the app exists waits for it, then is answered by it with its socket', async (t) => {
  const { open, port } = await opened(t);
  const early = fetch(`http://127.0.0.1:${port}/who`);
  // The request is received and parked, not refused.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const app = new Hono().get('/who', (c) => c.json({ address: getConnInfo(c).remote.address }));
  open(app.fetch);
  const res = await early;
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { address: '127.0.0.1' });
  // Later requests go straight to the app.
  const again = await fetch(`http://127.0.0.1:${port}/who`);
  assert.equal(again.status, 200);
});

test('a taken port refuses with the one line and fix, not an error trace', async (t) => {
  const { port } = await opened(t);
  await assert.rejects(
    openListener(settings(port), { metrics: createMetrics(), logger: memoryLogger() }),
    (err: Error) =>
      err instanceof StartRefused &&
      err.message.startsWith(`127.0.0.1:${port} is already in use`) &&
      err.message.endsWith('--port <n>'),
  );
});

test('a HOST that is not an address of this machine refuses with the fix', async () => {
  await assert.rejects(
    openListener({ ...settings(0), HOST: '192.0.2.1' }, { metrics: createMetrics(), logger: memoryLogger() }),
    (err: Error) =>
      err instanceof StartRefused && /HOST 192\.0\.2\.1 is not an address of this machine/.test(err.message),
  );
});

test('past its limit of requests waiting for a starting server, the next is answered 503 with Retry-After', async (t) => {
  const listener = await openListener(settings(0), { metrics: createMetrics(), logger: memoryLogger() }, 2);
  t.after(
    () =>
      new Promise<void>((resolve) => {
        listener.server.closeAllConnections();
        listener.server.close(() => resolve());
      }),
  );
  const url = `http://127.0.0.1:${(listener.server.address() as AddressInfo).port}/x`;
  const held = [fetch(url), fetch(url)];
  await new Promise((resolve) => setTimeout(resolve, 100));
  const third = await fetch(url);
  assert.equal(third.status, 503);
  assert.equal(third.headers.get('retry-after'), '1');
  assert.deepEqual(await third.json(), {
    error: 'server starting; send the same request again shortly',
    retryAfterSeconds: 1,
    disclaimer: disclaimerText('https://example.test/terms'),
  });
  listener.open(() => new Response('ok'));
  for (const r of await Promise.all(held)) assert.equal(await r.text(), 'ok');
});

test('an app that throws on a request that waited fails that request alone, not the process', async (t) => {
  const { open, port } = await opened(t);
  const early = fetch(`http://127.0.0.1:${port}/boom`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  open((req) => {
    if (new URL(req.url).pathname === '/boom') throw new Error('boom');
    return new Response('ok');
  });
  assert.equal((await early).status, 500);
  assert.equal(await (await fetch(`http://127.0.0.1:${port}/fine`)).text(), 'ok');
});

test('an accept that fails once listening is counted and logged once a minute; the server goes on', async (t) => {
  const { open, port, server, metrics, logger } = await opened(t);
  open(() => new Response('ok'));
  // libuv absorbs EMFILE itself (test/ops/accept-errors.test.ts); what reaches the server is rarer
  // (ENOBUFS, ENOMEM, a firewall's EPERM), so the fault is raised here by hand.
  for (const code of ['ENOBUFS', 'ENOBUFS', 'EPERM'])
    server.emit('error', Object.assign(new Error(`accept ${code}`), { code, syscall: 'accept' }));
  assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'ok');
  const logged = logger.lines.map((l) => JSON.parse(l)).filter((r) => r.msg === 'accept failed');
  assert.deepEqual(
    logged.map((r) => [r.level, r.code, r.failures]),
    [['warn', 'ENOBUFS', 1]],
  );
  assert.match(metrics.render(), /isocast_accept_errors_total\{code="ENOBUFS"\} 2\n/);
  assert.match(metrics.render(), /isocast_accept_errors_total\{code="EPERM"\} 1\n/);
});
