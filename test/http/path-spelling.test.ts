import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { listen, testApp } from '../helpers/app.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { ROUTE_DOCS } from '../../src/app.ts';

/**
 * Issue 23.2: every path decision (address limit, CORS, operator routes, metric label, 405) keys
 * on the path the router matches, so a percent-encoded spelling of a route is that route.
 */
const TOKEN = 'path-spelling-admin-token-0123456789abcdef';

/** One HTTP/1.1 request with the target exactly as written (fetch would normalise some spellings). */
function raw(base: string, method: string, target: string): Promise<{ status: number; head: string; body: string }> {
  const { port, host } = new URL(base);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), '127.0.0.1', () =>
      s.write(`${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`),
    );
    let buf = '';
    s.setEncoding('latin1');
    s.on('data', (d: string) => (buf += d));
    s.on('end', () => {
      const [head = '', body = ''] = buf.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head: head.toLowerCase(), body });
    });
    s.on('error', reject);
  });
}

/** The path with the first letter of its first segment percent-encoded (`/v1/x` -> `/%761/x`). */
const encodeFirst = (path: string) => path.replace(/[a-z]/, (ch) => `%${ch.charCodeAt(0).toString(16)}`);

test('alternating spellings of the limited routes share one address budget', async (t) => {
  const env = testApp(t, { env: { RATE_LIMIT_ADDRESS_PER_MIN: '1', RATE_LIMIT_ADDRESS_BURST: '4' } });
  const base = await listen(t, env.app.fetch);
  const spellings = [
    ['POST', '/v1/subscribe?city=nyc&count=2'],
    ['POST', '/v1/%73ubscribe?city=nyc&count=2'],
    ['POST', '/v1/%73%75bscribe?city=nyc&count=2'],
    ['POST', '/x/%2e%2e/v1/%73ubscribe?city=nyc&count=2'],
    ['POST', '/v1/%72eceipts'],
    ['POST', '/v1/delivery/%6Dessenger'],
    ['POST', '/v1/delivery/%6dessenger'],
    ['GET', '/v1/%73ignals?city=nyc'],
  ] as const;
  const statuses: number[] = [];
  for (let i = 0; i < 24; i++) {
    const [method, target] = spellings[i % spellings.length]!;
    const res = await raw(base, method, target);
    statuses.push(res.status);
  }
  // The paid read is only limited with a payment header; the raw client sends none, so those
  // requests pass unlimited and the other 21 share the burst of 4.
  const limitedSent = statuses.filter((_, i) => spellings[i % spellings.length]![0] === 'POST').length;
  const refused = statuses.filter((s) => s === 429).length;
  assert.equal(refused, limitedSent - 4, `statuses: ${statuses.join(',')}`);
});

test('operator routes under any spelling get no CORS; the public routes keep it', async (t) => {
  const env = testApp(t, { env: { ADMIN_TOKEN: TOKEN } });
  const base = await listen(t, env.app.fetch);
  for (const target of [
    '/%61dmin/data.json',
    '/%61dmin',
    '/adm%69n/data.json',
    '/%6detrics',
    '/%6Detrics',
    '/x/%2E%2E/admin',
  ]) {
    for (const method of ['GET', 'OPTIONS']) {
      const res = await raw(base, method, target);
      assert.ok(!res.head.includes('access-control-allow-origin'), `${method} ${target}: ${res.head}`);
    }
  }
  const pub = await raw(base, 'GET', '/h%65alth');
  assert.equal(pub.status, 200);
  assert.match(pub.head, /access-control-allow-origin: \*/);
});

test("every route's metric label and 405 are the same for the plain and the encoded spelling", async (t) => {
  const metrics = createMetrics();
  const env = testApp(t, { env: { ADMIN_TOKEN: TOKEN }, deps: { metrics } });
  const base = await listen(t, env.app.fetch);
  const seen = new Set<string>();
  for (const doc of ROUTE_DOCS) {
    const path = doc.path.replace('{slug}', 'nyc').replace('{file}', 'app.js');
    if (seen.has(path)) continue;
    seen.add(path);
    const plain = await raw(base, 'PATCH', path);
    const encoded = await raw(base, 'PATCH', encodeFirst(path));
    assert.equal(plain.status, 405, path);
    assert.equal(encoded.status, 405, encodeFirst(path));
    assert.equal(encoded.body, plain.body, path);
    assert.equal(/allow: (.*)/.exec(encoded.head)?.[1], /allow: (.*)/.exec(plain.head)?.[1], path);
  }
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  for (const doc of ROUTE_DOCS) {
    const route = doc.path.replace(/\{([^}]+)\}/g, ':$1');
    const line = `isocast_http_request_duration_seconds_count{method="PATCH",route="${route}",status="405"} 2`;
    assert.ok(text.includes(line), `missing: ${line}`);
  }
  assert.ok(!text.includes('route="unmatched"'), 'no encoded spelling fell out of its route');
});

test('other spellings: each is either the route everywhere or refused everywhere', async (t) => {
  const env = testApp(t, { env: { RATE_LIMIT_ADDRESS_PER_MIN: '1', RATE_LIMIT_ADDRESS_BURST: '1' } });
  const base = await listen(t, env.app.fetch);
  // The budget of one is spent first, so every spelling the router would run as subscribe is a 429.
  assert.equal((await raw(base, 'POST', '/v1/subscribe?city=nyc&count=2')).status, 402);
  const cases: [string, number][] = [
    ['/v1/subscribe?city=nyc&count=2', 429],
    ['/v1/%73UBSCRIBE', 404], // case is significant in the path
    ['/V1/subscribe', 404],
    ['//v1/subscribe', 404], // the router does not merge empty segments
    ['/v1//subscribe', 404],
    ['/v1%2Fsubscribe', 404], // decodeURI keeps %2F encoded: not a segment separator
    ['/v1%2fsubscribe', 404],
    ['/v1/%2573ubscribe', 404], // %25 stays a literal '%'
    ['/v1/subscribe%00', 404],
    ['/v1/subscribe/', 308], // the trailing-slash redirect, for every spelling
    ['/v1/%73ubscribe/', 308],
    ['/x/../v1/subscribe', 429], // @hono/node-server resolves dot segments before the app sees the URL
    ['/v1/./%73ubscribe', 429],
    ['/v1/%2E/subscribe', 429],
    ['/x/%2e%2E/v1/subscribe', 429],
  ];
  for (const [target, status] of cases) {
    const res = await raw(base, 'POST', target);
    assert.equal(res.status, status, `${target}: ${res.head}`);
    if (status === 308) assert.match(res.head, /location: \/v1\/(subscribe|%73ubscribe)\r?$/m, target);
  }
  // A decoded control character never reaches the redirect's Location header.
  const crlf = await raw(base, 'GET', '/v1/cities/n%0d%0ayc/');
  assert.equal(crlf.status, 308);
  assert.match(crlf.head, /location: \/v1\/cities\/n%0d%0ayc/);
});
