import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { listen, testApp } from '../helpers/app.ts';
import { runScenarios, type Scenario } from '../helpers/scenarios.ts';

const TOKEN = 'exposure-test-admin-token-0123456789abcdef';
const bearer = { authorization: `Bearer ${TOKEN}` };

/** Over a real socket: the framing test writes raw bytes the fetch API cannot. */
async function server(t: Parameters<typeof testApp>[0]) {
  const app = testApp(t, { env: { ADMIN_TOKEN: TOKEN } });
  return { ...app, base: await listen(t, app.app.fetch) };
}

const nosniff = { 'x-content-type-options': 'nosniff' };

test('preflight: the public API allows X-Payment, Authorization and Content-Type from any origin', async (t) => {
  const { app } = testApp(t, { env: { ADMIN_TOKEN: TOKEN } });
  const preflight = (path: string, methods: RegExp): Scenario => ({
    name: path,
    method: 'OPTIONS',
    path,
    headers: {
      origin: 'https://agent.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'x-payment, authorization, content-type',
    },
    expect: {
      status: 204,
      headers: {
        'access-control-allow-origin': '*',
        'access-control-allow-headers':
          'X-Payment, PAYMENT-SIGNATURE, SIGN-IN-WITH-X, Access-Control-Expose-Headers, Authorization, Content-Type',
        'access-control-allow-methods': methods,
        ...nosniff,
      },
      check: (res) => {
        for (const h of ['X-Payment', 'Authorization', 'Content-Type'])
          assert.match(res.headers.get('access-control-allow-headers')!, new RegExp(h));
        assert.ok(Number(res.headers.get('access-control-max-age')) > 0);
      },
    },
  });
  await runScenarios(t, app, [
    preflight('/v1/subscribe?city=nyc&count=2', /POST|GET/),
    preflight('/v1/signals?city=nyc', /POST|GET/),
    preflight('/v1/delivery/messenger', /POST|GET/),
    preflight('/v1/cities', /GET/),
  ]);
});

test('public answers expose the payment and receipt headers; operator routes carry no CORS at all', async (t) => {
  const { app } = testApp(t, { env: { ADMIN_TOKEN: TOKEN } });
  const evil = { origin: 'https://evil.example' };
  const operator = (path: string, headers: Record<string, string> = {}): Scenario[] => [
    {
      name: `${path}: no CORS`,
      path,
      headers: { ...headers, ...evil },
      expect: {
        status: 200,
        headers: { 'access-control-allow-origin': null, 'access-control-expose-headers': null, ...nosniff },
      },
    },
    {
      name: `${path}: no preflight`,
      method: 'OPTIONS',
      path,
      headers: { ...evil, 'access-control-request-method': 'GET' },
      expect: { status: { not: 204 }, headers: { 'access-control-allow-origin': null } },
    },
  ];
  await runScenarios(t, app, [
    {
      name: 'the challenge exposes X-PAYMENT-RESPONSE and X-Receipt-Token',
      method: 'POST',
      path: '/v1/subscribe?city=nyc&count=2',
      headers: { origin: 'https://agent.example' },
      expect: {
        status: 402,
        headers: { 'access-control-allow-origin': '*' },
        check: (res) => {
          const exposed = res.headers.get('access-control-expose-headers') ?? '';
          assert.match(exposed, /X-PAYMENT-RESPONSE/);
          assert.match(exposed, /X-Receipt-Token/);
        },
      },
    },
    {
      name: 'the catalogue',
      path: '/v1/cities',
      expect: { status: 200, headers: { 'access-control-allow-origin': '*' } },
    },
    ...operator('/metrics', bearer),
    ...operator('/admin'),
    ...operator('/admin/data.json', bearer),
    ...operator('/admin/assets/admin.js'),
  ]);
});

test('nosniff on every answer, a CSP on the two HTML pages', async (t) => {
  const { app } = testApp(t, { env: { ADMIN_TOKEN: TOKEN } });
  await runScenarios(t, app, [
    ...[
      '/health',
      '/v1/cities',
      '/v1/cities/nyc',
      '/openapi.json',
      '/llms.txt',
      '/terms.txt',
      '/api/assets/api.css',
    ].map((path): Scenario => ({ name: path, path, expect: { status: 200, headers: nosniff } })),
    { name: 'an unknown path', path: '/nope', expect: { status: 404, headers: nosniff } },
    ...['/api', '/admin'].map(
      (path): Scenario => ({
        name: `${path}: CSP`,
        path,
        expect: {
          status: 200,
          check: (res) => {
            const csp = res.headers.get('content-security-policy') ?? '';
            assert.match(csp, /default-src 'none'.*script-src 'self'/);
            assert.match(csp, /frame-ancestors 'none'/);
          },
        },
      }),
    ),
  ]);
});

test('/metrics without a token: 404 when ADMIN_TOKEN is unset (as /admin), 401 when set', async (t) => {
  const off = testApp(t, { env: {} });
  await runScenarios(
    t,
    off.app,
    ['/metrics', '/admin'].map((path) => ({
      name: `unset: ${path}`,
      path,
      expect: {
        status: 404,
        check: async (res) => assert.equal(((await res.json()) as { error: string }).error, 'not found'),
      },
    })),
  );
  const on = testApp(t, { env: { ADMIN_TOKEN: TOKEN } });
  await runScenarios(t, on.app, [
    { name: 'set: /metrics', path: '/metrics', expect: { status: 401, headers: { 'www-authenticate': 'Bearer' } } },
  ]);
});

test('assets are looked up in a Map: prototype names are 404', async (t) => {
  const { app } = testApp(t, { env: { ADMIN_TOKEN: TOKEN } });
  await runScenarios(t, app, [
    ...['constructor', '__proto__', 'toString', 'hasOwnProperty'].flatMap((name): Scenario[] => [
      { name: `admin ${name}`, path: `/admin/assets/${name}`, expect: { status: 404 } },
      { name: `api ${name}`, path: `/api/assets/${name}`, expect: { status: 404 } },
    ]),
    { name: 'a real asset', path: '/api/assets/api.js', expect: { status: 200 } },
  ]);
});

test('a trailing slash redirects 308 to the canonical path, keeping the query', async (t) => {
  const { app } = testApp(t, { env: { ADMIN_TOKEN: TOKEN } });
  const redirect = (from: string, to: string): Scenario => ({
    name: from,
    method: from.startsWith('/v1/subscribe') ? 'POST' : 'GET',
    path: from,
    expect: { status: 308, headers: { location: to } },
  });
  await runScenarios(t, app, [
    redirect('/v1/cities/', '/v1/cities'),
    redirect('/v1/cities/nyc/', '/v1/cities/nyc'),
    redirect('/v1/signals/?city=nyc&since=3', '/v1/signals?city=nyc&since=3'),
    redirect('/v1/subscribe/?city=nyc&count=2', '/v1/subscribe?city=nyc&count=2'),
    redirect('/health//', '/health'),
    // A 308 keeps the method and body, so a POST that follows it reaches the real answer.
    { name: 'the POST followed', method: 'POST', path: '/v1/subscribe?city=nyc&count=2', expect: { status: 402 } },
    { name: 'an unknown path', path: '/no-such-thing/', expect: { status: 404 } },
  ]);
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
