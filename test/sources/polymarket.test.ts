import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCatalog } from '../../src/cities/catalog.ts';
import { manualClock } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { UpstreamError } from '../../src/lib/errors.ts';
import { parseGammaEvent } from '../../src/sources/market/gamma.ts';
import { createPolymarketSource, oddsFromBooks } from '../../src/sources/market/polymarket.ts';
import { gammaEvent, startFakeGamma, tokensOf } from '../fakes/gamma.ts';
import { startFakeClob } from '../fakes/clob.ts';

const catalog = createCatalog();
const nyc = catalog.get('nyc')!;
const ankara = catalog.get('ankara')!;
const F_LABELS = ['27°F or below', '28-29°F', '30-31°F', '32-33°F', '34-35°F', '36-37°F', '38°F or higher'];
const C_LABELS = ['-3°C or below', '-2°C', '-1°C', '0°C', '1°C', '2°C or higher'];

test('parses the Gamma wire shape: JSON-encoded token ids, labels in any order, neg-risk id', () => {
  const raw = gammaEvent({ token: 'nyc', date: '2025-12-30', labels: F_LABELS, withYear: false });
  raw.markets.reverse();
  const ev = parseGammaEvent(raw);
  assert.equal(ev.slug, 'highest-temperature-in-nyc-on-december-30');
  assert.equal(ev.url, 'https://polymarket.com/event/highest-temperature-in-nyc-on-december-30');
  assert.equal(ev.conditionId, raw.negRiskMarketID);
  assert.deepEqual(
    ev.buckets.map((b) => b.label),
    F_LABELS,
  );
  const t = tokensOf(raw, '32-33°F');
  const b = ev.buckets.find((x) => x.label === '32-33°F')!;
  assert.deepEqual([b.yesTokenId, b.noTokenId, b.lo, b.hi], [t.yes, t.no, 32, 33]);
  assert.equal(
    parseGammaEvent(gammaEvent({ token: 'nyc', date: '2025-12-30', labels: F_LABELS, negRisk: false })).conditionId,
    null,
  );
});

test('reads token ids by outcome when a market lists No first; negative °C labels', () => {
  const raw = gammaEvent({ token: 'toronto', date: '2026-01-20', labels: C_LABELS });
  const m = raw.markets[1]!;
  const [yes, no] = JSON.parse(m.clobTokenIds) as string[];
  m.outcomes = '["No", "Yes"]';
  m.clobTokenIds = JSON.stringify([no, yes]);
  const ev = parseGammaEvent(raw);
  assert.deepEqual([ev.buckets[1]!.label, ev.buckets[1]!.yesTokenId, ev.buckets[1]!.noTokenId], ['-2°C', yes, no]);
  assert.deepEqual(
    ev.buckets.map((b) => [b.lo, b.hi]),
    [
      [Number.NEGATIVE_INFINITY, -3],
      [-2, -2],
      [-1, -1],
      [0, 0],
      [1, 1],
      [2, Number.POSITIVE_INFINITY],
    ],
  );
});

test('garbage events are rejected whole with an UpstreamError', () => {
  const base = () => gammaEvent({ token: 'nyc', date: '2026-07-15', labels: F_LABELS });
  const cases: [string, (e: ReturnType<typeof base>) => void][] = [
    [
      'label',
      (e) => {
        e.markets[2]!.groupItemTitle = 'Other';
      },
    ],
    [
      'token ids',
      (e) => {
        e.markets[0]!.clobTokenIds = '["1"';
      },
    ],
    [
      'condition id',
      (e) => {
        e.markets[0]!.conditionId = '0x12';
      },
    ],
    [
      'overlap',
      (e) => {
        e.markets[2]!.groupItemTitle = '29-30°F';
      },
    ],
    [
      'no markets',
      (e) => {
        e.markets = [];
      },
    ],
  ];
  for (const [name, spoil] of cases) {
    const e = base();
    spoil(e);
    assert.throws(
      () => parseGammaEvent(e),
      (err) => err instanceof UpstreamError && err.upstream === 'gamma',
      name,
    );
  }
});

test('odds semantics: yes = YES best ask, no = NO best ask, midpoint of the YES book; best levels are the last elements', () => {
  const yesBook = {
    asset_id: 'y',
    bids: [
      { price: 0.3, size: 120 },
      { price: 0.31, size: 50 },
    ],
    asks: [
      { price: 0.35, size: 40 },
      { price: 0.34, size: 75 },
    ],
    last_trade_price: 0.33,
  };
  const noBook = {
    asset_id: 'n',
    bids: [
      { price: 0.64, size: 10 },
      { price: 0.655, size: 10 },
    ],
    asks: [
      { price: 0.7, size: 10 },
      { price: 0.69, size: 10 },
    ],
  };
  assert.deepEqual(oddsFromBooks(yesBook, noBook), { yes: 0.34, no: 0.69, midpoint: 0.325 });
  // Without a NO book: NO costs 1 - best YES bid.
  assert.deepEqual(oddsFromBooks(yesBook, undefined), { yes: 0.34, no: 0.69, midpoint: 0.325 });
  // One-sided YES book: YES ask from the NO bids, midpoint from the NO book.
  assert.deepEqual(oddsFromBooks({ ...yesBook, asks: [] }, noBook), { yes: 0.345, no: 0.69, midpoint: 0.3275 });
  assert.equal(oddsFromBooks({ asset_id: 'y', bids: [], asks: [] }, undefined), null);
});

test('event lookup tries the -YYYY slug then the yearless one, caches hits and misses, and odds come from one /books call', async (t) => {
  const gamma = await startFakeGamma();
  const clob = await startFakeClob();
  t.after(() => Promise.all([gamma.close(), clob.close()]));
  const clock = manualClock(Date.parse('2025-12-30T15:00:00Z'));
  const source = createPolymarketSource({
    gammaUrl: gamma.url,
    clobUrl: clob.url,
    clock,
    logger: memoryLogger(),
    missingTtlMs: 60_000,
  });

  assert.equal(await source.event(ankara, '2026-08-20'), null);
  assert.deepEqual(
    gamma.requests.map((r) => r.query.get('slug')),
    ['highest-temperature-in-ankara-on-august-20-2026', 'highest-temperature-in-ankara-on-august-20'],
  );
  gamma.put(gammaEvent({ token: 'ankara', date: '2026-08-20', labels: C_LABELS }));
  assert.equal(await source.event(ankara, '2026-08-20'), null, 'a miss is cached');
  clock.advance(60_000);
  assert.equal((await source.event(ankara, '2026-08-20'))?.slug, 'highest-temperature-in-ankara-on-august-20-2026');

  const raw = gammaEvent({ token: 'nyc', date: '2025-12-30', labels: F_LABELS, withYear: false });
  gamma.put(raw);
  const ev = (await source.event(nyc, '2025-12-30'))!;
  assert.equal(ev.slug, 'highest-temperature-in-nyc-on-december-30');
  const before = gamma.requests.length;
  await source.event(nyc, '2025-12-30');
  assert.equal(gamma.requests.length, before, 'a hit is cached');

  F_LABELS.forEach((label, i) => {
    const tk = tokensOf(raw, label);
    clob.quote(tk.yes, tk.no, 0.05 + i * 0.1);
  });
  const odds = await source.odds(nyc, '2025-12-30', { event: ev });
  assert.equal(clob.requests.length, 1);
  assert.equal((clob.requests[0]!.body as unknown[]).length, F_LABELS.length * 2);
  assert.deepEqual(odds.byLabel.get('32-33°F'), { yes: 0.36, no: 0.66, midpoint: 0.35 });
  assert.equal(odds.asOfMs, clock.now());
});

test('CLOB garbage, missing books, 500s and timeouts are UpstreamErrors', async (t) => {
  const gamma = await startFakeGamma();
  const clob = await startFakeClob();
  t.after(() => Promise.all([gamma.close(), clob.close()]));
  const raw = gammaEvent({ token: 'nyc', date: '2026-07-15', labels: F_LABELS });
  gamma.put(raw);
  const source = createPolymarketSource({
    gammaUrl: gamma.url,
    clobUrl: clob.url,
    clock: manualClock(0),
    logger: memoryLogger(),
    clobTimeoutMs: 200,
  });
  const ev = (await source.event(nyc, '2026-07-15'))!;
  const isClob = (err: unknown) => err instanceof UpstreamError && err.upstream === 'clob';
  await assert.rejects(source.odds(nyc, '2026-07-15', { event: ev }), isClob, 'no books at all');
  F_LABELS.forEach((label) => {
    const tk = tokensOf(raw, label);
    clob.quote(tk.yes, tk.no, 0.2);
  });
  for (const fault of [
    { kind: 'status', status: 500 },
    { kind: 'hang' },
    { kind: 'not-json' },
    { kind: 'wrong-shape' },
  ] as const) {
    clob.fault({ ...fault, times: 1 });
    await assert.rejects(source.odds(nyc, '2026-07-15', { event: ev }), isClob, fault.kind);
  }
  assert.equal((await source.odds(nyc, '2026-07-15', { event: ev })).byLabel.size, F_LABELS.length);
});
