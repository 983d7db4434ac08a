import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { testApp } from '../helpers/app.ts';
import { buy, over } from '../payments/buy.ts';
import { startHttpServer, HTTP_TIMEOUTS } from '../../src/ops/http-server.ts';
import { createConnectionCap } from '../../src/limits/connections.ts';
import { parseTrustedProxies } from '../../src/limits/client-address.ts';
import { createMetrics } from '../../src/lib/metrics.ts';

/**
 * Issue 23.9: slow clients. The listener's real settings (src/ops/http-server.ts) with the
 * timeouts shortened so the test is bounded; the attacker connects from 127.0.0.2 (loopback, a
 * different client address), the buyer from 127.0.0.1.
 */
const SHORT = { headersTimeoutMs: 1_000, requestTimeoutMs: 1_500, keepAliveTimeoutMs: 1_000, checkIntervalMs: 100 };

async function serveWith(
  t: { after(fn: () => Promise<void> | void): void },
  fetchFn: (req: Request) => Response | Promise<Response>,
  max: number,
  metrics = createMetrics(),
) {
  const cap = createConnectionCap({ max, trustedProxies: parseTrustedProxies('10.9.9.9') });
  const server = startHttpServer({
    fetch: fetchFn,
    hostname: '127.0.0.1',
    port: 0,
    cap,
    disclaimer: 'Informational only; not financial advice.',
    metrics,
    timeouts: SHORT,
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, cap };
}

test('the defaults fit the API: POST bodies cut well before 90 s, headers sooner, no cut of a 25 s long-poll', () => {
  assert.ok(
    HTTP_TIMEOUTS.requestTimeoutMs <= 30_000 && HTTP_TIMEOUTS.requestTimeoutMs > HTTP_TIMEOUTS.headersTimeoutMs,
  );
  assert.ok(HTTP_TIMEOUTS.checkIntervalMs <= 1_000);
});

test('a GET answered after requestTimeout is not cut: the timeout covers receiving the request only', async (t) => {
  const { port } = await serveWith(t, () => new Promise((r) => setTimeout(() => r(new Response('late')), 2_500)), 4);
  const res = await fetch(`http://127.0.0.1:${port}/`);
  assert.equal(await res.text(), 'late');
});

test('slowloris: a bounded flood of trickling sockets is capped and cut, while /health and a paid purchase answer', async (t) => {
  const env = testApp(t);
  const MAX = 8;
  const metrics = createMetrics();
  const { port, cap } = await serveWith(t, env.app.fetch, MAX, metrics);
  const base = `http://127.0.0.1:${port}`;

  const SOCKETS = 40;
  const DURATION_MS = 4_000;
  const deadline = Date.now() + DURATION_MS;
  const outcome = { refused: 0, cut: 0, cutBodies: [] as string[], cutAfterMs: [] as number[], other: 0 };
  const live = new Set<Socket>();
  const slot = (i: number): Promise<void> =>
    new Promise((done) => {
      const s = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
      live.add(s);
      const opened = Date.now();
      let got = '';
      // Half trickle headers that never end; half declare a body on a purchase route and trickle it.
      const head =
        i % 2 === 0
          ? 'GET /health HTTP/1.1\r\nHost: x\r\n'
          : 'POST /v1/subscribe?city=nyc&count=2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{';
      const drip = setInterval(() => s.writable && s.write(i % 2 === 0 ? 'X-a: b\r\n' : ' '), 200);
      s.on('connect', () => s.write(head));
      s.on('data', (d) => (got += d));
      s.on('error', () => {});
      s.on('close', () => {
        clearInterval(drip);
        live.delete(s);
        if (got.startsWith('HTTP/1.1 429')) outcome.refused++;
        else if (got.startsWith('HTTP/1.1 408')) {
          outcome.cut++;
          outcome.cutAfterMs.push(Date.now() - opened);
          outcome.cutBodies.push(got.slice(got.indexOf('\r\n\r\n') + 4));
        } else if (Date.now() < deadline) outcome.other++;
        if (Date.now() < deadline) setTimeout(() => slot(i).then(done), 250);
        else done();
      });
    });
  const attack = Promise.all(Array.from({ length: SOCKETS }, (_, i) => slot(i)));
  const stop = setTimeout(() => {
    for (const s of live) s.destroy();
  }, DURATION_MS);

  // The buyer, from another address, while the flood runs.
  const healthMs: number[] = [];
  const buyer = privateKeyToAccount(generatePrivateKey());
  await new Promise((r) => setTimeout(r, 500));
  let boughtAt = 0;
  const purchase = buy(over(base), buyer, 'nyc', 2, env.clock.now()).then((r) => {
    boughtAt = Date.now();
    return r;
  });
  while (Date.now() < deadline - 300) {
    const started = performance.now();
    const res = await fetch(`${base}/health`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    healthMs.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 100));
  }
  const bought = await purchase;
  await attack;
  clearTimeout(stop);

  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  // Answered while the flood was still running. No latency bound: the machine is shared, and
  // speed figures belong to benchmarks.
  assert.ok(boughtAt > 0 && boughtAt < deadline, 'the purchase completed during the flood');
  assert.ok(healthMs.length >= 5, healthMs.map((m) => m.toFixed(0)).join(','));
  assert.ok(outcome.refused > 0, 'sockets past the cap were refused');
  assert.ok(outcome.cut > 0, 'trickling sockets were cut');
  for (const body of outcome.cutBodies) assert.match(body, /"error":"request not received in time".*"disclaimer"/);
  const limit = SHORT.requestTimeoutMs + SHORT.checkIntervalMs + 700;
  assert.ok(Math.max(...outcome.cutAfterMs) <= limit, `a trickle lived ${Math.max(...outcome.cutAfterMs)} ms`);
  const text = metrics.render();
  assert.match(text, /isocast_connections_refused_total \d+/);
  t.diagnostic(
    `${SOCKETS} sockets for ${DURATION_MS} ms: ${outcome.refused} refused (429), ${outcome.cut} cut (408), ` +
      `${outcome.other} other; /health x${healthMs.length}, slowest ${Math.max(...healthMs).toFixed(1)} ms; purchase ${bought.status}`,
  );
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(cap.size(), 0, 'every counted connection was uncounted at close');
});

test('the cap keys on the client (IPv6 /64, mapped IPv4); a trusted proxy is not capped; 0 is off', () => {
  const cap = createConnectionCap({ max: 2, trustedProxies: parseTrustedProxies('10.0.0.1') });
  const a = cap.open('2001:db8:1:1::1');
  const b = cap.open('2001:DB8:1:1::ffff');
  assert.deepEqual([a.ok, b.ok, cap.open('2001:db8:1:1:0:0:0:1').ok], [true, true, false]);
  assert.equal(cap.open('2001:db8:1:2::1').ok, true, 'another /64');
  cap.close(a.key);
  assert.equal(cap.open('2001:db8:1:1::7').ok, true, 'a closed socket frees its place');
  const v4 = [cap.open('198.51.100.1'), cap.open('::ffff:198.51.100.1')];
  assert.deepEqual([...v4.map((r) => r.ok), cap.open('::ffff:c633:6401').ok], [true, true, false]);
  for (let i = 0; i < 10; i++) assert.equal(cap.open('10.0.0.1').ok, true);
  const off = createConnectionCap({ max: 0, trustedProxies: parseTrustedProxies('') });
  for (let i = 0; i < 10; i++) assert.equal(off.open('198.51.100.1').ok, true);
  assert.equal(off.size(), 0);
});
