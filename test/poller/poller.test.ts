import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signalSchema, type SignalPublic } from '../../src/signals/schemas.ts';
import { tokensOf } from '../fakes/gamma.ts';
import { harness, NYC_LABELS } from './harness.ts';

test('a reading rising across two buckets gives exactly two signals, with odds from the CLOB, visible on the running server', async (t) => {
  const h = await harness(t);
  const committed: SignalPublic[] = [];
  const inTx: { seq: number; inTransaction: boolean }[] = [];
  const poller = h.makePoller({
    onSignalInTransaction: (s) => inTx.push({ seq: s.seq, inTransaction: h.env.db.inTransaction }),
    onSignalCommitted: (s) => committed.push(s),
  });

  h.report(20.0, 30); // 68 °F: baseline
  const first = await poller.tick();
  assert.deepEqual([first.baselines, first.signals.length, first.errors], [1, 0, []]);
  const { targetDate, high, bucket } = h.env.stores.signals.latestReadings().get('nyc')!;
  assert.deepEqual({ targetDate, high, bucket }, { targetDate: '2026-07-15', high: 68, bucket: '68-69°F' });

  h.env.clock.advance(1_000);
  h.report(20.6); // 69.08 -> 69 °F: same bucket
  assert.equal((await poller.tick()).signals.length, 0);

  h.env.clock.advance(1_000);
  h.report(21.2); // 70.16 -> 70 °F: into 70-71
  const second = await poller.tick();
  assert.equal(second.signals.length, 1);
  const s1 = second.signals[0]!;
  assert.deepEqual(signalSchema().parse(s1), s1);
  assert.deepEqual(
    [s1.seq, s1.old, s1.new],
    [1, { reading: 69, unit: 'F', bucket: '68-69°F' }, { reading: 70, unit: 'F', bucket: '70-71°F' }],
  );
  assert.equal(s1.marketUrl, 'https://polymarket.com/event/highest-temperature-in-nyc-on-july-15-2026');
  assert.equal(s1.conditionId, h.nycEvent.negRiskMarketID);
  assert.equal(s1.source, 'metar');
  assert.equal(s1.buckets!.length, NYC_LABELS.length);
  const b70 = s1.buckets!.find((b) => b.label === '70-71°F')!;
  assert.deepEqual({ yes: b70.yes, no: b70.no, midpoint: b70.midpoint }, { yes: 0.27, no: 0.75, midpoint: 0.26 });
  assert.equal(b70.conditionId, h.nycEvent.markets[3]!.conditionId);
  assert.deepEqual(
    s1.buckets!.filter((b) => b.dead).map((b) => b.label),
    ['65°F or below', '66-67°F', '68-69°F'],
  );
  assert.ok(Date.parse(s1.bucketsAsOf!) - Date.parse(s1.observedAt) <= 10_000);

  for (let i = 0; i < 3; i++) {
    h.env.clock.advance(1_000);
    assert.equal((await poller.tick()).signals.length, 0, 'repeated ticks emit nothing');
  }

  h.clob.quote(tokensOf(h.nycEvent, '72-73°F').yes, tokensOf(h.nycEvent, '72-73°F').no, 0.5);
  h.env.clock.advance(1_000);
  h.report(22.3); // 72.14 -> 72 °F
  h.report(22.3); // the same observation twice (a SPECI duplicate)
  const third = await poller.tick();
  assert.equal(third.signals.length, 1);
  const s2 = third.signals[0]!;
  assert.deepEqual([s2.seq, s2.old.bucket, s2.new.bucket], [2, '70-71°F', '72-73°F']);
  assert.equal(s2.buckets!.find((b) => b.label === '72-73°F')!.midpoint, 0.5);

  h.env.clock.advance(1_000);
  h.report(21.0); // cooler later: the high never goes down
  assert.equal((await poller.tick()).signals.length, 0);

  assert.deepEqual(
    committed.map((s) => s.seq),
    [1, 2],
  );
  assert.deepEqual(inTx, [
    { seq: 1, inTransaction: true },
    { seq: 2, inTransaction: true },
  ]);
  const reader = h.env.stores.reader;
  assert.equal(reader.latestSeq('nyc'), 2);
  assert.deepEqual(JSON.parse(reader.pageBytes('nyc', { since: 0, end: 2, tail: () => '}' }).toString()).signals, [
    s1,
    s2,
  ]);

  const city = (await (await h.env.app.request(`/v1/cities/nyc`)).json()) as { city: { latestSeq: number } };
  assert.equal(city.city.latestSeq, 2);
  const sample = (await (await h.env.app.request(`/v1/sample?city=nyc`)).json()) as SignalPublic & {
    synthetic: boolean;
  };
  assert.deepEqual([sample.seq, sample.synthetic, sample.new.bucket], [1, false, '70-71°F']);
});

test('a restart in the middle emits nothing twice', async (t) => {
  const h = await harness(t);
  h.report(20.0, 30);
  await h.poller.tick();
  h.env.clock.advance(1_000);
  h.report(21.2);
  assert.equal((await h.poller.tick()).signals[0]?.seq, 1);
  await h.poller.stop();

  // A new process: fresh poller, fresh market cache, same database and the same upstream data.
  const restarted = h.makePoller();
  for (let i = 0; i < 3; i++) {
    h.env.clock.advance(1_000);
    const r = await restarted.tick();
    assert.deepEqual([r.signals.length, r.baselines, r.errors.length], [0, 0, 0]);
  }
  h.env.clock.advance(1_000);
  h.report(22.3);
  assert.equal((await restarted.tick()).signals[0]?.seq, 2);
  assert.equal(h.env.db.prepare("SELECT count(*) FROM signals WHERE city = 'nyc'").pluck().get(), 2);
});

// CLOB faults no longer hold a crossing back (the signal goes out with `buckets: null` within the
// odds budget): test/poller/odds-deadline.test.ts.
test('weather upstream 500s, timeouts and malformed JSON produce no signal and no crash; the city backs off, then recovers', async (t) => {
  const h = await harness(t, { cities: ['nyc', 'chicago', 'london'] });
  const poller = h.makePoller();
  h.report(20.0, 30);
  const base = await poller.tick();
  assert.deepEqual([base.baselines, base.noMarket.sort(), base.errors], [1, ['chicago', 'london'], []]);
  h.report(21.2);

  const faults = [
    ['metar', { kind: 'status', status: 500 }],
    ['metar', { kind: 'hang' }],
    ['metar', { kind: 'not-json' }],
    ['metar', { kind: 'wrong-shape' }],
  ] as const;
  for (const [upstream, fault] of faults) {
    h.metar.fault({ ...fault, times: 1 });
    h.env.clock.advance(60 * 60_000); // far past any backoff
    const r = await poller.tick();
    assert.equal(r.signals.length, 0, `${upstream} ${fault.kind}`);
    assert.deepEqual(
      r.errors.map((e) => e.city),
      ['nyc'],
      `${upstream} ${fault.kind}`,
    );
    assert.match(r.errors[0]!.error, new RegExp(`^${upstream}:`));
    assert.equal(h.env.db.prepare('SELECT count(*) FROM signals').pluck().get(), 0);
    // Backing off: the very next tick leaves the city alone.
    h.env.clock.advance(500);
    assert.deepEqual((await poller.tick()).backingOff, ['nyc']);
  }
  h.env.clock.advance(60 * 60_000);
  const ok = await poller.tick();
  assert.deepEqual([ok.signals.length, ok.errors.length], [1, 0]);
  assert.ok(h.env.logger.lines.some((l) => l.includes('"msg":"poll failed"')));
});

test('gamma failures and a missing market: no signals, no error loop, the other cities carry on', async (t) => {
  const h = await harness(t, { cities: ['nyc', 'chicago'] });
  h.gamma.put(
    (await import('../fakes/gamma.ts')).gammaEvent({
      token: 'chicago',
      date: '2026-07-15',
      labels: ['75°F or below', '76-77°F', '78-79°F', '80°F or higher'],
    }),
  );
  h.metar.addReport('KORD', { atMs: h.env.clock.now() - 60_000, tempC: 24 });
  h.report(20.0, 30);
  h.gamma.fault({ kind: 'status', status: 502, times: 2 }); // nyc's two slug lookups... or chicago's: either way one city fails
  const r = await h.poller.tick();
  assert.equal(r.errors.length + r.baselines, 2);
  assert.ok(r.errors.every((e) => e.error.startsWith('gamma:')));

  // Event vanishes for a new day: asked once, then cached as missing; no errors, no signals.
  h.gamma.remove('highest-temperature-in-nyc-on-july-15-2026');
  h.env.clock.advance(24 * 3_600_000);
  const before = h.gamma.requests.length;
  const day2 = await h.poller.tick();
  assert.ok(day2.noMarket.includes('nyc'));
  assert.ok(day2.errors.length === 0);
  for (let i = 0; i < 5; i++) {
    h.env.clock.advance(1_000);
    await h.poller.tick();
  }
  const nycLookups = h.gamma.requests.slice(before).filter((q) => q.query.get('slug')!.includes('-nyc-')).length;
  assert.equal(nycLookups, 2, 'one lookup per slug form, then the miss is cached');
  h.gamma.fault({ kind: 'wrong-shape' });
  h.env.clock.advance(2 * 60 * 60_000);
  const garbage = await h.poller.tick();
  assert.equal(garbage.signals.length, 0);
  h.gamma.fault(null);
});

test('ticks never overlap, and stop() waits for the tick in flight', async (t) => {
  const h = await harness(t);
  h.report(20.0, 30);
  h.metar.fault({ kind: 'hang', times: 1 });
  const a = h.poller.tick();
  const b = h.poller.tick();
  assert.equal(a, b, 'a tick asked for while one runs is the same tick');
  h.poller.start();
  await h.poller.stop();
  const r = await a;
  assert.equal(r.errors.length, 1, 'the hung request timed out');
  assert.equal(h.metar.requests.length, 1, 'start() during a tick did not run a second one');
});

test('once the poller has seen the event, /v1/cities/{slug} links its real page (here the yearless slug form)', async (t) => {
  const h = await harness(t);
  const { gammaEvent } = await import('../fakes/gamma.ts');
  h.gamma.remove(h.nycEvent.slug);
  h.gamma.put(gammaEvent({ token: 'nyc', date: '2026-07-15', labels: NYC_LABELS, withYear: false }));
  const before = (await (await h.env.app.request(`/v1/cities/nyc`)).json()) as { marketUrl: string };
  assert.equal(
    before.marketUrl,
    'https://polymarket.com/event/highest-temperature-in-nyc-on-july-15-2026',
    'the default guess',
  );
  await h.poller.tick();
  const after = (await (await h.env.app.request(`/v1/cities/nyc`)).json()) as { marketUrl: string };
  assert.equal(after.marketUrl, 'https://polymarket.com/event/highest-temperature-in-nyc-on-july-15');
});
