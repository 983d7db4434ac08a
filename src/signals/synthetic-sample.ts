import type { SignalPublic } from './schemas.ts';

/** `/v1/sample`'s example when no real seq-1 signal exists (marked `synthetic: true`; its ids are made up). */
const labels = [
  '35°F or below',
  ...Array.from({ length: 9 }, (_, i) => `${36 + 2 * i}-${37 + 2 * i}°F`),
  '54°F or higher',
];
const yes = [0.001, 0.001, 0.002, 0.004, 0.06, 0.41, 0.33, 0.13, 0.04, 0.015, 0.008];

export const SYNTHETIC_SAMPLE: SignalPublic = {
  city: 'nyc',
  displayName: 'NYC',
  seq: 1,
  targetDate: '2026-01-15',
  marketUrl: 'https://polymarket.com/event/highest-temperature-in-nyc-on-january-15-2026',
  conditionId: '0x' + '5a'.repeat(32),
  old: { reading: 41, unit: 'F', bucket: '40-41°F' },
  new: { reading: 44, unit: 'F', bucket: '44-45°F' },
  buckets: labels.map((label, i) => ({
    label,
    conditionId: '0x' + (i + 16).toString(16).padStart(2, '0').repeat(32),
    yes: yes[i]!,
    no: Math.min(0.999, Math.round((1 - yes[i]! + 0.002) * 1000) / 1000),
    midpoint: Math.round((yes[i]! - 0.001) * 10000) / 10000 || 0.0005,
    ...(i < 5 ? { dead: true as const } : {}),
  })),
  bucketsAsOf: '2026-01-15T17:52:03.000Z',
  source: 'wu',
  observedAt: '2026-01-15T17:52:01.000Z',
  reportedAt: '2026-01-15T17:51:00.000Z',
  channel: 'wu',
  rawReport: null,
  reportedValue: 44,
  reportedUnit: 'F',
  reportedPrecision: 1,
  availableAt: null,
  storedAt: '2026-01-15T17:52:03.400Z',
};
