import { test } from 'node:test';
import assert from 'node:assert/strict';
import { localDate } from '../../src/lib/local-day.ts';
import { createPolymarketSource } from '../../src/sources/market/polymarket.ts';
import { createMetarWeather } from '../../src/sources/weather/metar.ts';
import { signalSchema } from '../../src/signals/schemas.ts';
import { gammaEvent, tokensOf } from '../fakes/gamma.ts';
import type { Fault } from '../fakes/upstream.ts';
import { harness, NYC_LABELS, START, type Harness } from '../poller/harness.ts';

/**
 * Gamma, the CLOB and METAR being slow, rate limiting (429 + Retry-After) and lying, against the
 * real poller and signal store. Invariants: no signal that is not a real rise of the observed
 * daily high into a new bucket, never two for one (city, day, bucket), a Retry-After is respected,
 * and the city recovers (one signal) when the upstream behaves again. docs/reliability.md.
 */
const signals = (h: Harness) =>
  (h.env.db.prepare('SELECT payload FROM signals ORDER BY seq').pluck().all() as string[]).map((p) =>
    signalSchema().parse(JSON.parse(p)),
  );

/** A poller that asks Gamma every tick (no event cache), so Gamma faults are seen at once. */
function uncachedPoller(h: Harness) {
  return h.makePoller({
    market: createPolymarketSource({
      gammaUrl: h.gamma.url,
      clobUrl: h.clob.url,
      clock: h.env.clock,
      logger: h.env.logger,
      gammaTimeoutMs: 300,
      clobTimeoutMs: 300,
      foundTtlMs: 0,
      missingTtlMs: 0,
    }),
  });
}

for (const upstream of ['gamma', 'metar'] as const) {
  test(`${upstream} answers 429 with Retry-After: no signal, no retry before it, then exactly one signal`, async (t) => {
    const h = await harness(t);
    const poller = uncachedPoller(h);
    h.report(20.0, 30);
    assert.equal((await poller.tick()).baselines, 1);
    h.report(21.2); // 70 °F: a crossing into 70-71°F
    const fake = { gamma: h.gamma, metar: h.metar, clob: h.clob }[upstream];
    fake.fault({ kind: 'status', status: 429, retryAfterSec: 120 });
    h.env.clock.advance(1_000);
    const limited = await poller.tick();
    assert.equal(limited.signals.length, 0);
    assert.match(limited.errors[0]!.error, /HTTP 429/);
    const callsAfter429 = fake.requests.length;
    fake.fault(null);
    // The interval-based backoff would allow a retry after a second or two; Retry-After says 120 s.
    for (const step of [2_000, 30_000, 60_000]) {
      h.env.clock.advance(step);
      assert.deepEqual((await poller.tick()).backingOff, ['nyc'], `still backing off after +${step} ms`);
    }
    assert.equal(fake.requests.length, callsAfter429, 'no request to the rate-limited upstream before Retry-After');
    h.env.clock.advance(30_000);
    const recovered = await poller.tick();
    assert.deepEqual([recovered.signals.length, recovered.errors.length], [1, 0]);
    h.env.clock.advance(1_000);
    assert.equal((await poller.tick()).signals.length, 0, 'the same crossing is not signalled again');
    assert.deepEqual(
      signals(h).map((s) => [s.seq, s.old.bucket, s.new.bucket]),
      [[1, '68-69°F', '70-71°F']],
    );
  });
}

test('slow upstreams inside their timeouts: the tick waits and the crossing is signalled once', async (t) => {
  const h = await harness(t);
  const poller = h.makePoller({
    market: createPolymarketSource({
      gammaUrl: h.gamma.url,
      clobUrl: h.clob.url,
      clock: h.env.clock,
      logger: h.env.logger,
      gammaTimeoutMs: 2_000,
      clobTimeoutMs: 2_000,
      foundTtlMs: 0,
    }),
    weather: createMetarWeather({ baseUrl: h.metar.url, clock: h.env.clock, timeoutMs: 2_000 }),
  });
  h.report(20.0, 30);
  await poller.tick();
  h.report(21.2);
  const slow: Fault = { kind: 'delay', ms: 200 };
  for (const fake of [h.gamma, h.metar, h.clob]) fake.fault(slow);
  const r = await poller.tick();
  assert.deepEqual([r.signals.length, r.errors.length], [1, 0]);
  assert.equal(signals(h)[0]!.buckets!.length, NYC_LABELS.length);
});

test('METAR lies: a falling temperature, a hotter report from yesterday and duplicates emit nothing; a real rise emits once', async (t) => {
  const h = await harness(t);
  const poller = h.makePoller();
  h.report(21.2, 60); // 70 °F baseline
  await poller.tick();
  h.report(18.0); // falls to 64 °F
  h.report(21.2, 5); // the same high again
  // 13 hours ago is the previous local day in New York (START is noon there): 35 °C must not count.
  h.metar.addReport('KLGA', { atMs: START - 13 * 3_600_000, tempC: 35 });
  h.env.clock.advance(60_000);
  const r = await poller.tick();
  assert.deepEqual([r.signals.length, r.errors.length], [0, 0]);
  const high = h.env.db.prepare('SELECT high FROM day_state WHERE city = ?').pluck().get('nyc');
  assert.equal(high, 70, 'the day high never goes down and ignores yesterday');
  h.report(22.3); // 72.14 -> 72 °F
  h.env.clock.advance(60_000);
  assert.equal((await poller.tick()).signals.length, 1);
  assert.deepEqual(
    signals(h).map((s) => [s.old.reading, s.new.reading, s.new.bucket]),
    [[70, 72, '72-73°F']],
  );
});

test('Gamma lies: a ladder that changes mid-day emits nothing by itself; an overlapping ladder is refused; recovery signals once', async (t) => {
  const h = await harness(t);
  const poller = uncachedPoller(h);
  h.report(20.0, 30); // 68 °F in 68-69°F
  await poller.tick();
  const date = localDate('America/New_York', START);
  // Same slug, buckets shifted by one degree: 68 °F now sits in 67-68°F. No reading rose.
  const shifted = [
    '66°F or below',
    ...Array.from({ length: 9 }, (_, i) => `${67 + 2 * i}-${68 + 2 * i}°F`),
    '85°F or higher',
  ];
  const ev = gammaEvent({ token: 'nyc', date, labels: shifted, cityName: 'New York City' });
  h.gamma.put(ev);
  shifted.forEach((label) => {
    const tk = tokensOf(ev, label);
    h.clob.quote(tk.yes, tk.no, 0.1);
  });
  h.env.clock.advance(60_000);
  assert.deepEqual([(await poller.tick()).signals.length, signals(h).length], [0, 0]);

  const broken = gammaEvent({
    token: 'nyc',
    date,
    labels: ['66-69°F', '68-71°F', '72°F or higher'],
    cityName: 'New York City',
  });
  h.gamma.put(broken);
  h.report(22.3); // 72 °F
  h.env.clock.advance(60_000);
  const refused = await poller.tick();
  assert.equal(refused.signals.length, 0);
  assert.match(refused.errors[0]!.error, /^gamma: unusable ladder: buckets overlap/);

  h.gamma.put(ev);
  h.env.clock.advance(10 * 60_000);
  assert.equal((await poller.tick()).signals.length, 1);
  // The crossing is told from the bucket stored for the old reading to the new ladder's bucket.
  assert.deepEqual(
    signals(h).map((s) => [s.old.reading, s.old.bucket, s.new.reading, s.new.bucket]),
    [[68, '68-69°F', 72, '71-72°F']],
  );
});

test('CLOB 429 with Retry-After: the crossing goes out at once without odds; no CLOB call before Retry-After; priced after', async (t) => {
  const h = await harness(t);
  const poller = h.makePoller({ oddsDeadlineMs: 2_000 });
  h.report(20.0, 30);
  await poller.tick();
  h.report(21.2); // 70 °F
  h.clob.fault({ kind: 'status', status: 429, retryAfterSec: 120 });
  h.env.clock.advance(1_000);
  const limited = await poller.tick();
  assert.deepEqual(
    [limited.signals.length, limited.errors.length],
    [1, 0],
    'a rate-limited CLOB does not hold the crossing back',
  );
  assert.deepEqual([limited.signals[0]!.buckets, limited.signals[0]!.bucketsAsOf], [null, null]);
  const callsAfter429 = h.clob.requests.length;
  assert.equal(callsAfter429, 1, 'no retry inside the budget against a Retry-After longer than it');
  h.clob.fault(null);
  h.env.clock.advance(30_000);
  h.report(22.3); // 72 °F: another crossing inside the Retry-After window
  const inside = await poller.tick();
  assert.deepEqual([inside.signals.length, inside.signals[0]!.buckets], [1, null]);
  assert.equal(h.clob.requests.length, callsAfter429, 'no request to the rate-limited CLOB before Retry-After');
  h.env.clock.advance(91_000);
  h.report(23.4); // 74 °F
  const after = await poller.tick();
  assert.equal(after.signals[0]!.buckets!.length, NYC_LABELS.length);
  assert.deepEqual(
    signals(h).map((s) => [s.seq, s.new.bucket]),
    [
      [1, '70-71°F'],
      [2, '72-73°F'],
      [3, '74-75°F'],
    ],
  );
});

test('CLOB lies: odds out of range leave the ladder unpriced (buckets null, never insane odds); a vanished book is shown as no quote', async (t) => {
  const h = await harness(t);
  const poller = h.makePoller({ oddsDeadlineMs: 600 });
  h.report(20.0, 30);
  await poller.tick();
  h.report(21.2);
  const tk = tokensOf(h.nycEvent, '70-71°F');
  h.clob.setBook(tk.yes, { bids: [{ price: 1.4, size: 10 }], asks: [{ price: 1.5, size: 10 }] });
  h.env.clock.advance(60_000);
  const lying = await poller.tick();
  assert.equal(lying.signals.length, 1);
  assert.deepEqual([lying.signals[0]!.buckets, lying.signals[0]!.bucketsAsOf], [null, null]);
  assert.ok(
    h.env.logger.lines.some((l) => l.includes('storing signal without odds') && l.includes('clob: malformed books')),
  );

  // A book that vanished (both sides and no trade) leaves one bucket without any price.
  h.clob.setBook(tk.yes, { bids: [], asks: [] });
  h.clob.setBook(tk.no, { bids: [], asks: [] });
  h.report(22.3); // 72 °F
  h.env.clock.advance(60_000);
  const [s] = (await poller.tick()).signals;
  assert.equal(s!.new.bucket, '72-73°F');
  const empty = s!.buckets!.find((b) => b.label === '70-71°F')!;
  assert.deepEqual([empty.yes, empty.no, empty.midpoint, empty.noQuote, empty.dead], [1, 1, 0.5, true, true]);
  for (const b of s!.buckets!) {
    for (const p of [b.yes, b.no, b.midpoint]) assert.ok(p >= 0 && p <= 1);
    if (b.label !== '70-71°F') assert.equal(b.noQuote, undefined);
  }
});
