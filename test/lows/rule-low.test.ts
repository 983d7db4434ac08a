import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseResolutionRule } from '../../src/sources/market/resolution-rule.ts';
import { ruleText } from '../../src/sources/market/rule-text.ts';
import { CITY_ROWS } from '../../src/cities/catalog.ts';

/**
 * Real daily-low rule texts (found with the search tool; docs/resolution-rules.md "Daily lows"):
 * - NYC, lowest-temperature-in-nyc-on-june-4-2026, quoted at
 *   https://polymarketworld.com/event/lowest-temperature-in-nyc-on-june-4-2026 (resolved 66-67°F);
 * - Hong Kong, lowest-temperature-in-hong-kong-on-may-31-2026, quoted at
 *   https://polygram.ink/event/weather/lowest-temperature-in-hong-kong-on-may-31-2026.
 */
const NYC_LOW =
  "This market will resolve to the temperature range that contains the lowest temperature recorded at the LaGuardia Airport Station in degrees Fahrenheit on 4 Jun '26.\n\n" +
  'The resolution source for this market will be information from Wunderground, specifically the lowest temperature recorded for all times on this day for the LaGuardia Airport Station, available here: https://www.wunderground.com/history/daily/us/ny/new-york-city/KLGA.\n\n' +
  'To toggle between Fahrenheit and Celsius, click the gear icon next to the search bar and switch the Temperature setting between °F and °C.\n\n' +
  'This market can not resolve until the first data point for the following date has been published on the resolution source.\n\n' +
  'The resolution source for this market measures temperatures to whole degrees Fahrenheit (eg, 21°F). Thus, this is the level of precision that will be used when resolving the market.';

const HK_LOW =
  "This market will resolve to the temperature range that contains the lowest temperature recorded by the Hong Kong Observatory in degrees Celsius on 31 May '26. " +
  'The resolution source for this market will be information from the Hong Kong Observatory, specifically the "Absolute Daily Min (deg. C)" the specified date once information is finalized in the relevant "Daily Extract", available here: https://www.weather.gov.hk/en/cis/climat.htm ' +
  'This market can not resolve until data for this date has been published. ' +
  'The resolution source for this market measures temperatures in Celsius to one decimal place (eg, 9.1°C). Thus, this is the level of precision that will be used when resolving the market.';

test('the real NYC daily-low rule parses as the high does, with extreme low', () => {
  const rule = parseResolutionRule(NYC_LOW, 'https://www.wunderground.com/history/daily/us/ny/new-york-city/KLGA');
  assert.equal(rule.source, 'wu');
  assert.equal(rule.kind, 'wu-table');
  assert.equal(rule.station, 'KLGA');
  assert.equal(rule.unit, 'F');
  assert.equal(rule.precision, 1);
  assert.equal(rule.extreme, 'low');
});

test('the real Hong Kong daily-low rule: HKO, 0.1 °C, extreme low', () => {
  const rule = parseResolutionRule(HK_LOW, 'https://www.weather.gov.hk/en/cis/climat.htm');
  assert.equal(rule.source, 'hko');
  assert.equal(rule.kind, 'hko');
  assert.equal(rule.unit, 'C');
  assert.equal(rule.precision, 0.1);
  assert.equal(rule.extreme, 'low');
});

test('the extreme a rule names: highest, lowest, both or neither', () => {
  const wu = ruleText(CITY_ROWS.find((c) => c.slug === 'nyc')!, '2026-06-04', { kind: 'wu' });
  // The WU wording with its own "highest temperature" neutral, then the phrase under test.
  const extremeOf = (phrase: string) =>
    parseResolutionRule(
      `${wu.description.replaceAll('highest temperature', 'temperature')}\n\n${phrase}`,
      wu.resolutionSource,
    ).extreme;
  assert.equal(extremeOf('the highest temperature recorded'), 'high');
  assert.equal(extremeOf('specifically the highest reading under the "Temp" column'), 'high');
  assert.equal(extremeOf('specifically the "Absolute Daily Max (deg. C)"'), 'high');
  assert.equal(extremeOf('the lowest reading under the "Temp" column'), 'low');
  assert.equal(extremeOf('the highest temperature or the lowest temperature'), null);
  assert.equal(extremeOf('the temperature'), null);
});

test('the simulated and fake low rules go through the live parser as lows', () => {
  const nyc = CITY_ROWS.find((c) => c.slug === 'nyc')!;
  for (const kind of ['wu', 'noaa'] as const) {
    const t = ruleText(nyc, '2026-06-04', { kind, extreme: 'low' });
    const rule = parseResolutionRule(t.description, t.resolutionSource);
    assert.equal(rule.extreme, 'low', kind);
    assert.equal(rule.station, 'KLGA', kind);
    const high = ruleText(nyc, '2026-06-04', { kind });
    assert.equal(parseResolutionRule(high.description, high.resolutionSource).extreme, 'high', kind);
  }
});
