import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.ts';
import { runScenarios } from '../helpers/scenarios.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { MAX_BODY_BYTES } from '../../src/app.ts';

const TOKEN = 'a-long-admin-token-0123456789-0123456789';
const admin = { authorization: `Bearer ${TOKEN}` };

test('/metrics: the admin bearer token; 404 like /admin when ADMIN_TOKEN is unset, even from loopback', async (t) => {
  const off = testApp(t);
  const adminAnswer = await (await off.app.request('/admin')).json();
  await runScenarios(t, off.app, [
    { name: 'unset: /metrics is /admin', path: '/metrics', expect: { status: 404, json: adminAnswer } },
  ]);

  const metrics = createMetrics();
  const open = testApp(t, { deps: { metrics }, env: { ADMIN_TOKEN: TOKEN } });
  await runScenarios(t, open.app, [
    { name: 'a city', path: '/v1/cities/nyc', expect: { status: 200 } },
    { name: 'an unknown city', path: '/v1/cities/atlantis', expect: { status: 404 } },
    { name: 'HEAD a city', method: 'HEAD', path: '/v1/cities/nyc', expect: { status: 200 } },
    { name: 'a wrong method', path: '/v1/subscribe', expect: { status: 405 } },
    { name: 'an unknown path', path: `/no/such/${'x'.repeat(50)}`, expect: { status: 404 } },
    { name: 'another unknown path', path: '/no/such/other', expect: { status: 404 } },
    {
      name: 'the scrape',
      path: '/metrics',
      headers: admin,
      expect: {
        status: 200,
        headers: { 'content-type': /^text\/plain; version=0\.0\.4/ },
        body: [
          /isocast_http_request_duration_seconds_count\{method="GET",route="\/v1\/cities\/:slug",status="200"\} 1/,
          // An unknown city is counted under its route, not its raw path.
          /route="\/v1\/cities\/:slug",status="404"\} 1/,
          /_count\{method="HEAD",route="\/v1\/cities\/:slug",status="200"\} 1/,
          // A wrong method is counted under the route it missed.
          /_count\{method="GET",route="\/v1\/subscribe",status="405"\} 1/,
          // Unknown paths share one label.
          /_count\{method="GET",route="unmatched",status="404"\} 2/,
          { not: /no\/such/ },
        ],
      },
    },
    {
      name: 'no token',
      path: '/metrics',
      expect: {
        status: 401,
        check: async (res) =>
          assert.equal(typeof ((await res.json()) as { disclaimer?: unknown }).disclaimer, 'string'),
      },
    },
    { name: 'a wrong token', path: '/metrics', headers: { authorization: 'Bearer nope' }, expect: { status: 401 } },
  ]);
});

test('request bodies over the limit are refused with a JSON 413', async (t) => {
  const env = testApp(t);
  await runScenarios(t, env.app, [
    {
      name: 'one byte over',
      method: 'POST',
      path: '/v1/cities',
      body: 'x'.repeat(MAX_BODY_BYTES + 1),
      // Declared as a socket client declares it; the limit refuses before anything reads the body.
      headers: { 'content-type': 'application/json', 'content-length': String(MAX_BODY_BYTES + 1) },
      expect: {
        status: 413,
        check: async (res) => {
          const b = (await res.json()) as { error: string; disclaimer: unknown };
          assert.match(b.error, /larger than/);
          assert.equal(typeof b.disclaimer, 'string');
        },
      },
    },
  ]);
});
