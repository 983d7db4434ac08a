import type { TempUnit } from '../lib/temperature.ts';

/**
 * How a raw observation becomes the number a market resolves on. Every active city's rules say the
 * source "measures temperatures to whole degrees" of the city's unit, so a reading is converted to
 * that unit first and rounded once, at the end:
 *
 * - Half-degree rule: exactly .5 rounds up, toward warmer (-2.5 -> -2, 2.5 -> 3), which is the
 *   METAR/ASOS convention weather.com displays.
 * - °C to °F: US METARs carry tenths of °C (the RMK T-group, itself converted from the sensor's
 *   whole °F), so F = C * 9/5 + 32 then round: 21.7 °C -> 71.06 -> 71 °F. Rounding the °C first
 *   would lose up to 0.9 °F and put readings in the wrong 2 °F bucket.
 * Float noise from the conversion (71.49999999) is cleaned to 1e-6 before rounding.
 */
export function convertTemp(temp: number, from: TempUnit, to: TempUnit): number {
  if (from === to) return temp;
  return from === 'C' ? (temp * 9) / 5 + 32 : ((temp - 32) * 5) / 9;
}

export function wholeDegrees(temp: number): number {
  const clean = Math.round(temp * 1e6) / 1e6;
  return Math.floor(clean + 0.5);
}

/** A raw temperature as the resolution source would show it: whole degrees of `to`. */
export function resolveReading(temp: number, from: TempUnit, to: TempUnit): number {
  return wholeDegrees(convertTemp(temp, from, to));
}
