import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, seededInstance } from '../admin/instance.ts';

/** One sample line's value, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('a scrape after purchases, crossings and deliveries shows every operations family with the right values', async (t) => {
  const s = await seededInstance(t);
  await (await s.f('/v1/cities/nyc')).body?.cancel();
  const res = await s.f('/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(res.status, 200);
  const text = await res.text();

  // Every family is announced with HELP and TYPE.
  for (const [name, type] of [
    ['isocast_http_request_duration_seconds', 'histogram'],
    ['isocast_poll_ticks_total', 'counter'],
    ['isocast_poll_tick_duration_seconds', 'histogram'],
    ['isocast_upstream_errors_total', 'counter'],
    ['isocast_signals_total', 'counter'],
    ['isocast_payments_total', 'counter'],
    ['isocast_payments_settled_micro_usdc_total', 'counter'],
    ['isocast_payment_commits_total', 'counter'],
    ['isocast_payment_commit_units_total', 'counter'],
    ['isocast_refunds_queued', 'gauge'],
    ['isocast_refunds_queued_micro_usdc', 'gauge'],
    ['isocast_payments_open', 'gauge'],
    ['isocast_delivery_sends_total', 'counter'],
    ['isocast_delivery_latency_seconds', 'histogram'],
    ['isocast_delivery_outbox_rows', 'gauge'],
  ]) {
    assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), `${name} missing`);
    assert.match(text, new RegExp(`^# HELP ${name} \\S`, 'm'), `${name} has no help`);
  }

  // Poller: three ticks, two NYC signals, Chicago's market in the wrong unit counted as a market error.
  assert.equal(sample(text, 'isocast_poll_ticks_total'), 3);
  assert.equal(sample(text, 'isocast_poll_tick_duration_seconds_count'), 3);
  assert.equal(sample(text, 'isocast_signals_total{city="nyc"}'), 2);
  assert.equal(
    sample(text, 'isocast_upstream_errors_total{upstream="polymarket"}'),
    2,
    'chicago failed twice, then backed off',
  );

  // Payments: five applied purchases, one idempotent replay, one forged amount.
  assert.equal(sample(text, 'isocast_payments_total{outcome="settled"}'), 5);
  assert.equal(sample(text, 'isocast_payments_total{outcome="idempotent"}'), 1);
  assert.equal(sample(text, 'isocast_payments_total{outcome="verification_failed"}'), 1);
  // nyc: 20 x 0.005 + 2 x 0.005 + 500 x 0.004 = 2.11 USDC
  assert.equal(sample(text, 'isocast_payments_settled_micro_usdc_total{city="nyc"}'), 2_110_000);
  assert.equal(sample(text, 'isocast_payments_settled_micro_usdc_total{city="london"}'), 450_000);
  // Claims and applications go through group commits; one at a time here, so one unit per commit.
  const units = sample(text, 'isocast_payment_commit_units_total')!;
  assert.ok(units >= 10, `claims and applications counted: ${units}`);
  assert.equal(sample(text, 'isocast_payment_commits_total'), units);

  // Refund queue read from the database at scrape time.
  assert.equal(sample(text, 'isocast_refunds_queued'), 1);
  assert.equal(sample(text, 'isocast_refunds_queued_micro_usdc'), 100_000);
  assert.equal(sample(text, 'isocast_payments_open{status="settled"}'), 0);

  // Deliveries: both NYC signals reached buyer A's chat; buyer B paid but registered no chat.
  assert.equal(sample(text, 'isocast_delivery_sends_total{outcome="sent"}'), 2);
  assert.equal(sample(text, 'isocast_delivery_latency_seconds_count'), 2);
  assert.equal(sample(text, 'isocast_delivery_outbox_rows{status="sent"}'), 2);
  assert.equal(sample(text, 'isocast_delivery_outbox_rows{status="failed"}'), 0);

  // Request latency, by route pattern.
  assert.ok(
    (sample(text, 'isocast_http_request_duration_seconds_count{method="POST",route="/v1/subscribe",status="200"}') ??
      0) >= 6,
  );
  assert.equal(
    sample(text, 'isocast_http_request_duration_seconds_count{method="GET",route="/v1/cities/:slug",status="200"}'),
    1,
  );

  // A refund queued later shows on the next scrape without any counter having been touched.
  s.env.db.prepare(`UPDATE refunds SET status = 'paid'`).run();
  const again = await (await s.f('/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  assert.equal(sample(again, 'isocast_refunds_queued'), 0);
});
