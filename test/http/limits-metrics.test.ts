import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listen, testApp } from '../helpers/app.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { MAX_BODY_BYTES } from '../../src/app.ts';

const TOKEN = 'a-long-admin-token-0123456789-0123456789';
const admin = { headers: { authorization: `Bearer ${TOKEN}` } };

test('/metrics: the admin bearer token; 404 like /admin when ADMIN_TOKEN is unset, even from loopback', async (t) => {
  const off = testApp(t);
  const offBase = await listen(t, off.app.fetch);
  const hidden = await fetch(`${offBase}/metrics`);
  assert.equal(hidden.status, 404);
  assert.deepEqual(await hidden.json(), await (await fetch(`${offBase}/admin`)).json(), 'the same answer as /admin');

  const metrics = createMetrics();
  const open = testApp(t, { deps: { metrics }, env: { ADMIN_TOKEN: TOKEN } });
  const base = await listen(t, open.app.fetch);
  await fetch(`${base}/v1/cities/nyc`);
  await fetch(`${base}/v1/cities/atlantis`);
  await fetch(`${base}/v1/cities/nyc`, { method: 'HEAD' });
  await fetch(`${base}/v1/subscribe`);
  await fetch(`${base}/no/such/${'x'.repeat(50)}`);
  await fetch(`${base}/no/such/other`);
  const res = await fetch(`${base}/metrics`, admin);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  assert.match(
    text,
    /isocast_http_request_duration_seconds_count\{method="GET",route="\/v1\/cities\/:slug",status="200"\} 1/,
  );
  assert.match(
    text,
    /route="\/v1\/cities\/:slug",status="404"\} 1/,
    'unknown city is counted under its route, not its raw path',
  );
  assert.match(text, /_count\{method="HEAD",route="\/v1\/cities\/:slug",status="200"\} 1/);
  assert.match(
    text,
    /_count\{method="GET",route="\/v1\/subscribe",status="405"\} 1/,
    'a wrong method is counted under the route it missed',
  );
  assert.match(text, /_count\{method="GET",route="unmatched",status="404"\} 2/, 'unknown paths share one label');
  assert.doesNotMatch(text, /no\/such/);

  const denied = await fetch(`${base}/metrics`);
  assert.equal(denied.status, 401);
  assert.equal(typeof ((await denied.json()) as any).disclaimer, 'string');
  const wrong = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer nope' } });
  assert.equal(wrong.status, 401);
});

test('request bodies over the limit are refused with a JSON 413', async (t) => {
  const env = testApp(t);
  const base = await listen(t, env.app.fetch);
  const res = await fetch(`${base}/v1/cities`, {
    method: 'POST',
    body: 'x'.repeat(MAX_BODY_BYTES + 1),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(res.status, 413);
  const b = (await res.json()) as any;
  assert.match(b.error, /larger than/);
  assert.equal(typeof b.disclaimer, 'string');
});
