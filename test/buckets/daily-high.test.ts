import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dailyExtreme, dailyHighReading, type Observation } from '../../src/buckets/daily-high.ts';
import { convertTemp, resolveReading, wholeDegrees } from '../../src/buckets/rounding.ts';

const at = (iso: string, temp: number, unit: 'C' | 'F' = 'C'): Observation => ({ atMs: Date.parse(iso), temp, unit });

test('half-degree rule rounds up toward warmer, also below zero', () => {
  assert.equal(wholeDegrees(2.5), 3);
  assert.equal(wholeDegrees(-2.5), -2);
  assert.equal(wholeDegrees(-2.6), -3);
  assert.equal(wholeDegrees(71.4999), 71);
  assert.equal(wholeDegrees(71.49999999999), 72); // float noise from a conversion is a half
  assert.equal(wholeDegrees(71.5), 72);
});

test('°C tenths convert to °F before rounding (the METAR -> WU path)', () => {
  assert.equal(resolveReading(21.7, 'C', 'F'), 71); // 71.06
  assert.equal(resolveReading(2.5, 'C', 'F'), 37); // exactly 36.5 -> up
  assert.equal(resolveReading(21.5, 'C', 'F'), 71); // 70.7; rounding °C first (22 °C) would give 72
  assert.equal(resolveReading(-2.3, 'C', 'C'), -2);
  assert.equal(resolveReading(71, 'F', 'C'), 22);
});

test('property: every ASOS whole-°F reading survives the trip through tenths of °C', () => {
  fc.assert(
    fc.property(fc.integer({ min: -40, max: 125 }), (f) => {
      const tenthsC = Math.round(convertTemp(f, 'F', 'C') * 10) / 10;
      assert.equal(resolveReading(tenthsC, 'C', 'F'), f);
    }),
  );
});

test('the day is the station-local calendar day, not the UTC day (Wellington, UTC+13 in January)', () => {
  const obs = [
    at('2026-01-14T10:30:00Z', 30), // 23:30 local on the 14th: previous day
    at('2026-01-14T11:00:00Z', 18), // 00:00 local on the 15th: first instant of the day
    at('2026-01-15T02:00:00Z', 24), // 15:00 local
    at('2026-01-15T11:00:00Z', 29), // 00:00 local on the 16th: next day
  ];
  assert.equal(dailyHighReading(obs, { timezone: 'Pacific/Auckland', date: '2026-01-15', unit: 'C' }), 24);
  assert.equal(dailyHighReading(obs, { timezone: 'Pacific/Auckland', date: '2026-01-14', unit: 'C' }), 30);
});

test('far west of UTC: a late-evening reading belongs to the local day even on the next UTC date (Los Angeles)', () => {
  const obs = [at('2026-07-16T06:30:00Z', 90, 'F'), at('2026-07-15T22:00:00Z', 85, 'F')]; // 23:30 and 15:00 PDT on the 15th
  assert.equal(dailyHighReading(obs, { timezone: 'America/Los_Angeles', date: '2026-07-15', unit: 'F' }), 90);
  assert.equal(dailyHighReading(obs, { timezone: 'America/Los_Angeles', date: '2026-07-16', unit: 'F' }), null);
});

test('DST days: 23-hour spring day and 25-hour autumn day keep exactly their own hours (New York)', () => {
  // 2026-03-08: clocks jump 02:00 -> 03:00 EST->EDT; the day is 05:00Z..04:00Z next day.
  const spring = [
    at('2026-03-08T04:59:00Z', 50, 'F'),
    at('2026-03-08T05:00:00Z', 40, 'F'),
    at('2026-03-09T03:59:00Z', 45, 'F'),
    at('2026-03-09T04:00:00Z', 60, 'F'),
  ];
  assert.equal(dailyHighReading(spring, { timezone: 'America/New_York', date: '2026-03-08', unit: 'F' }), 45);
  // 2026-11-01: 02:00 EDT -> 01:00 EST; the day is 04:00Z..05:00Z next day (25 h).
  const autumn = [
    at('2026-11-01T03:59:00Z', 70, 'F'),
    at('2026-11-01T04:00:00Z', 41, 'F'),
    at('2026-11-02T04:30:00Z', 55, 'F'),
    at('2026-11-02T05:00:00Z', 65, 'F'),
  ];
  assert.equal(dailyHighReading(autumn, { timezone: 'America/New_York', date: '2026-11-01', unit: 'F' }), 55);
});

test('max over mixed units, ties keep the earliest, non-finite temps ignored, empty day is null', () => {
  const obs = [
    at('2026-07-15T12:00:00Z', 20),
    at('2026-07-15T13:00:00Z', 68, 'F'),
    at('2026-07-15T14:00:00Z', Number.NaN),
    at('2026-07-15T15:00:00Z', 20),
  ];
  assert.equal(dailyExtreme(obs, { timezone: 'Europe/London', date: '2026-07-15' }), obs[0]);
  assert.equal(dailyHighReading([], { timezone: 'Europe/London', date: '2026-07-15', unit: 'C' }), null);
});
