import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics } from '../../src/lib/metrics.ts';

test('counters, gauges and histograms render in Prometheus text format', () => {
  const m = createMetrics();
  const payments = m.counter('isocast_payments_total', 'Payments by outcome');
  payments.inc({ outcome: 'settled' });
  payments.inc({ outcome: 'settled' }, 2);
  payments.inc({ outcome: 'binding "mismatch"' });
  const depth = m.gauge('isocast_outbox_queued', 'Queued deliveries');
  let calls = 0;
  m.collect(() => {
    calls++;
    depth.set(7);
  });
  const lat = m.histogram('isocast_http_request_seconds', 'Request latency', [0.01, 0.1, 1]);
  lat.observe(0.005, { route: '/health' });
  lat.observe(0.5, { route: '/health' });
  const text = m.render();
  assert.equal(calls, 1);
  assert.match(text, /# TYPE isocast_payments_total counter\n/);
  assert.match(text, /isocast_payments_total\{outcome="settled"\} 3\n/);
  assert.match(text, /isocast_payments_total\{outcome="binding \\"mismatch\\""\} 1\n/);
  assert.match(text, /isocast_outbox_queued 7\n/);
  assert.match(text, /isocast_http_request_seconds_bucket\{route="\/health",le="0.01"\} 1\n/);
  assert.match(text, /isocast_http_request_seconds_bucket\{route="\/health",le="1"\} 2\n/);
  assert.match(text, /isocast_http_request_seconds_bucket\{route="\/health",le="\+Inf"\} 2\n/);
  assert.match(text, /isocast_http_request_seconds_count\{route="\/health"\} 2\n/);
  m.counter('isocast_payments_total', 'registered twice').inc({ outcome: 'settled' });
  assert.match(m.render(), /isocast_payments_total\{outcome="settled"\} 4\n/, 'the same name is the same family');
});

test('a histogram series handle records into the same series as observe with those labels', () => {
  const m = createMetrics();
  const h = m.histogram('x_seconds', 'x', [0.1, 1]);
  const fixed = h.series({ route: '/a', status: '200' });
  fixed.observe(0.1); // on the edge: counts in le="0.1"
  fixed.observe(5); // above every bucket: only +Inf
  h.observe(0.5, { status: '200', route: '/a' }); // label order does not matter
  const text = m.render();
  assert.match(text, /x_seconds_bucket\{route="\/a",status="200",le="0.1"\} 1\n/);
  assert.match(text, /x_seconds_bucket\{route="\/a",status="200",le="1"\} 2\n/);
  assert.match(text, /x_seconds_bucket\{route="\/a",status="200",le="\+Inf"\} 3\n/);
  assert.match(text, /x_seconds_sum\{route="\/a",status="200"\} 5.6\n/);
  assert.equal(text.match(/x_seconds_count/g)?.length, 1, 'one series');
});
