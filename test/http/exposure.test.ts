import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { listen, testApp } from '../helpers/app.ts';
import { CORS_ALLOW_HEADERS } from '../../src/lib/edge.ts';

const TOKEN = 'exposure-test-admin-token-0123456789abcdef';
const bearer = { authorization: `Bearer ${TOKEN}` };

async function server(t: Parameters<typeof testApp>[0], env: Record<string, string> = { ADMIN_TOKEN: TOKEN }) {
  const app = testApp(t, { env });
  return { ...app, base: await listen(t, app.app.fetch) };
}

test('preflight: the public API allows X-Payment, Authorization and Content-Type from any origin', async (t) => {
  const { base } = await server(t);
  for (const path of [
    '/v1/subscribe?city=nyc&count=2',
    '/v1/signals?city=nyc',
    '/v1/delivery/messenger',
    '/v1/cities',
  ]) {
    const res = await fetch(base + path, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://agent.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-payment, authorization, content-type',
      },
    });
    assert.equal(res.status, 204, path);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('access-control-allow-headers'), CORS_ALLOW_HEADERS);
    for (const h of ['X-Payment', 'Authorization', 'Content-Type'])
      assert.match(res.headers.get('access-control-allow-headers')!, new RegExp(h));
    assert.match(res.headers.get('access-control-allow-methods')!, path.startsWith('/v1/cities') ? /GET/ : /POST|GET/);
    assert.ok(Number(res.headers.get('access-control-max-age')) > 0);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  }
});

test('public answers expose the payment and receipt headers; operator routes carry no CORS at all', async (t) => {
  const { base } = await server(t);
  const challenge = await fetch(`${base}/v1/subscribe?city=nyc&count=2`, {
    method: 'POST',
    headers: { origin: 'https://agent.example' },
  });
  assert.equal(challenge.status, 402);
  assert.equal(challenge.headers.get('access-control-allow-origin'), '*');
  const exposed = challenge.headers.get('access-control-expose-headers') ?? '';
  assert.match(exposed, /X-PAYMENT-RESPONSE/);
  assert.match(exposed, /X-Receipt-Token/);
  assert.equal((await fetch(`${base}/v1/cities`)).headers.get('access-control-allow-origin'), '*');

  for (const [path, init] of [
    ['/metrics', { headers: bearer }],
    ['/admin', {}],
    ['/admin/data.json', { headers: bearer }],
    ['/admin/assets/admin.js', {}],
  ] as const) {
    const res = await fetch(base + path, {
      ...init,
      headers: { ...('headers' in init ? init.headers : {}), origin: 'https://evil.example' },
    });
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('access-control-allow-origin'), null, `${path}: no CORS`);
    assert.equal(res.headers.get('access-control-expose-headers'), null);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    await res.arrayBuffer();
    const pre = await fetch(base + path, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    assert.notEqual(pre.status, 204, `${path}: no preflight`);
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
  }
});

test('nosniff on every answer, a CSP on the two HTML pages', async (t) => {
  const { base } = await server(t);
  for (const path of [
    '/health',
    '/v1/cities',
    '/v1/cities/nyc',
    '/nope',
    '/openapi.json',
    '/llms.txt',
    '/terms.txt',
    '/api/assets/api.css',
  ]) {
    const res = await fetch(base + path);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
    await res.arrayBuffer();
  }
  for (const path of ['/api', '/admin']) {
    const res = await fetch(base + path);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'.*script-src 'self'/, path);
    assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path);
    await res.text();
  }
});

test('/metrics without a token: 404 when ADMIN_TOKEN is unset (as /admin), 401 when set', async (t) => {
  const off = await server(t, {});
  for (const path of ['/metrics', '/admin']) {
    const res = await fetch(off.base + path);
    assert.equal(res.status, 404, path);
    assert.equal(((await res.json()) as { error: string }).error, 'not found');
  }
  const on = await server(t);
  const res = await fetch(`${on.base}/metrics`);
  assert.equal(res.status, 401);
  assert.equal(res.headers.get('www-authenticate'), 'Bearer');
  await res.arrayBuffer();
});

test('assets are looked up in a Map: prototype names are 404', async (t) => {
  const { base } = await server(t);
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    assert.equal((await fetch(`${base}/admin/assets/${name}`)).status, 404, `admin ${name}`);
    assert.equal((await fetch(`${base}/api/assets/${name}`)).status, 404, `api ${name}`);
  }
  assert.equal((await fetch(`${base}/api/assets/api.js`)).status, 200);
});

test('a trailing slash redirects 308 to the canonical path, keeping the query', async (t) => {
  const { base } = await server(t);
  for (const [from, to] of [
    ['/v1/cities/', '/v1/cities'],
    ['/v1/cities/nyc/', '/v1/cities/nyc'],
    ['/v1/signals/?city=nyc&since=3', '/v1/signals?city=nyc&since=3'],
    ['/v1/subscribe/?city=nyc&count=2', '/v1/subscribe?city=nyc&count=2'],
    ['/health//', '/health'],
  ] as [string, string][]) {
    const res = await fetch(base + from, {
      redirect: 'manual',
      method: from.startsWith('/v1/subscribe') ? 'POST' : 'GET',
    });
    assert.equal(res.status, 308, from);
    assert.equal(res.headers.get('location'), to, from);
  }
  // A 308 keeps the method and body, so a POST follows through to the real answer.
  assert.equal((await fetch(`${base}/v1/subscribe/?city=nyc&count=2`, { method: 'POST' })).status, 402);
  assert.equal((await fetch(`${base}/no-such-thing/`, { redirect: 'manual' })).status, 404);
});

/** Writes raw bytes and returns what the server answered before closing. */
function raw(base: string, bytes: string, endAfterMs?: number): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const s = connect(Number(url.port), url.hostname, () => {
      s.write(bytes);
      if (endAfterMs !== undefined) setTimeout(() => s.end(), endAfterMs);
    });
    let buf = '';
    s.on('data', (d) => {
      buf += d;
    });
    s.on('close', () => resolve(buf));
    s.on('error', () => resolve(buf));
    setTimeout(() => s.destroy(), 2000);
  });
}

test('client framing errors are a 4xx logged at debug level, never a 500 or an error log', async (t) => {
  const env = await server(t);
  const cases = [
    'POST /v1/delivery/messenger HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n5\r\n{"a":\r\nZZ\r\n',
    'POST /v1/subscribe?city=nyc&count=2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nnot-hex\r\n',
  ];
  for (const bytes of cases) {
    const answer = await raw(env.base, bytes);
    assert.match(answer, /^HTTP\/1\.1 4\d\d /, answer);
  }
  // A body cut off mid-way (the client hangs up).
  await raw(
    env.base,
    'POST /v1/delivery/messenger HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nContent-Type: application/json\r\n\r\n{"a":',
    50,
  );
  await new Promise((r) => setTimeout(r, 300));
  const lines = env.logger.lines.map((l) => JSON.parse(l) as { level: string; msg: string });
  assert.deepEqual(
    lines.filter((l) => l.level === 'error' || l.level === 'warn'),
    [],
  );
  assert.ok(lines.some((l) => l.level === 'debug' && l.msg === 'request body unreadable'));
  const metrics = await (await fetch(`${env.base}/metrics`, { headers: bearer })).text();
  assert.doesNotMatch(metrics, /status="500"/);
});
