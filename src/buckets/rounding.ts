import type { TempUnit } from '../lib/temperature.ts';

/**
 * A reading is converted to the market's unit first and rounded once, at the end (the rules say
 * the source "measures temperatures to whole degrees"): exactly .5 rounds toward warmer, the
 * METAR/ASOS convention. US METARs carry tenths of °C, and rounding the °C first would lose up to
 * 0.9 °F and put readings in the wrong 2 °F bucket. Conversion float noise is cleaned to 1e-6.
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
