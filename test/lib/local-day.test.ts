import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, isValidDate, localDate, localDayBounds } from '../../src/lib/local-day.ts';

const H = 3600_000;
const utc = (s: string) => Date.parse(s);

test('local date follows the zone, not UTC', () => {
  const t = utc('2026-07-15T03:30:00Z');
  assert.equal(localDate('UTC', t), '2026-07-15');
  assert.equal(localDate('America/Los_Angeles', t), '2026-07-14');
  assert.equal(localDate('Pacific/Auckland', t), '2026-07-15');
  assert.equal(localDate('Asia/Kolkata', utc('2026-07-14T18:29:59Z')), '2026-07-14');
  assert.equal(localDate('Asia/Kolkata', utc('2026-07-14T18:30:00Z')), '2026-07-15');
  assert.equal(localDate('Pacific/Auckland', utc('2026-07-14T11:59:59Z')), '2026-07-14');
  assert.equal(localDate('Pacific/Auckland', utc('2026-07-14T12:00:00Z')), '2026-07-15');
});

test('ordinary days are 24 hours and start at local midnight', () => {
  const la = localDayBounds('America/Los_Angeles', '2026-07-15');
  assert.equal(la.startMs, utc('2026-07-15T07:00:00Z'));
  assert.equal(la.endMs - la.startMs, 24 * H);
  const kol = localDayBounds('Asia/Kolkata', '2026-01-10');
  assert.equal(kol.startMs, utc('2026-01-09T18:30:00Z'));
  assert.equal(kol.endMs - kol.startMs, 24 * H);
});

test('spring-forward days are 23 hours, fall-back days 25 (Los Angeles, New York, London)', () => {
  const cases: [string, string, number, string][] = [
    ['America/Los_Angeles', '2026-03-08', 23, '2026-03-08T08:00:00Z'],
    ['America/Los_Angeles', '2026-11-01', 25, '2026-11-01T07:00:00Z'],
    ['America/New_York', '2026-03-08', 23, '2026-03-08T05:00:00Z'],
    ['Europe/London', '2026-03-29', 23, '2026-03-29T00:00:00Z'],
    ['Europe/London', '2026-10-25', 25, '2026-10-24T23:00:00Z'],
  ];
  for (const [tz, date, hours, start] of cases) {
    const b = localDayBounds(tz, date);
    assert.equal(b.startMs, utc(start), `${tz} ${date} start`);
    assert.equal((b.endMs - b.startMs) / H, hours, `${tz} ${date} length`);
  }
});

test('southern-hemisphere DST: Auckland springs forward in September and falls back in April', () => {
  const spring = localDayBounds('Pacific/Auckland', '2026-09-27');
  assert.equal((spring.endMs - spring.startMs) / H, 23);
  assert.equal(spring.startMs, utc('2026-09-26T12:00:00Z'));
  const fall = localDayBounds('Pacific/Auckland', '2026-04-05');
  assert.equal((fall.endMs - fall.startMs) / H, 25);
  assert.equal(fall.startMs, utc('2026-04-04T11:00:00Z'));
});

test('a zone whose clocks skip midnight starts the day at the first existing instant', () => {
  // America/Santiago springs forward at 24:00 -> 01:00 (2026-09-06 local).
  const start = localDayBounds('America/Santiago', '2026-09-06').startMs;
  assert.equal(localDate('America/Santiago', start), '2026-09-06');
  assert.notEqual(localDate('America/Santiago', start - 1), '2026-09-06');
});

test('every instant of a day maps back to that date, for a year of days in far-apart zones', () => {
  for (const tz of ['Pacific/Auckland', 'America/Los_Angeles', 'Asia/Kolkata', 'Europe/London']) {
    let date = '2026-01-01';
    for (let i = 0; i < 366; i++) {
      const { startMs, endMs } = localDayBounds(tz, date);
      assert.equal(localDate(tz, startMs), date);
      assert.equal(localDate(tz, endMs - 1), date);
      assert.notEqual(localDate(tz, startMs - 1), date);
      date = addDays(date, 1);
    }
  }
});

test('date helpers', () => {
  assert.equal(addDays('2026-02-28', 1), '2026-03-01');
  assert.equal(addDays('2028-02-28', 1), '2028-02-29');
  assert.equal(addDays('2026-01-01', -1), '2025-12-31');
  assert.ok(isValidDate('2026-02-28'));
  assert.ok(!isValidDate('2026-02-30'));
  assert.ok(!isValidDate('2026-2-3'));
});
