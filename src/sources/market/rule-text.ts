import type { CityRecord } from '../../cities/catalog.ts';
import type { MarketKind } from '../../lib/temperature.ts';

/** Live wording for simulated events, so the demo goes through the real parser and match-or-pause path. */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export function ruleText(
  city: Pick<CityRecord, 'displayName' | 'unit' | 'station' | 'stationPage'> & { country?: string | null },
  date: string,
  opts: {
    kind: 'wu' | 'noaa' | 'hko';
    /** Station named by the rule; the city's catalog station unless a test wants another. */
    station?: string;
    unit?: 'C' | 'F';
    stationName?: string;
    /** NOAA rules: whether the text names the "Show Hourly Data" view; default: US cities do, as the live US rules. */
    hourly?: boolean;
    /** A daily-low market's rule reads "lowest" where a high's reads "highest" (default high). */
    extreme?: MarketKind;
  },
): { description: string; resolutionSource: string } {
  const station = (opts.station ?? city.station ?? 'XXXX').toUpperCase();
  const unitWord = (opts.unit ?? city.unit) === 'F' ? 'Fahrenheit' : 'Celsius';
  const eg = unitWord === 'Fahrenheit' ? '21°F' : '9°C';
  const name = opts.stationName ?? `${city.displayName} Airport`;
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const day = `${d} ${MONTHS[m - 1]} '${String(y).slice(2)}`; // `29 Aug '26`, as the rules write the day
  // The live low rules are the high rules with "highest" -> "lowest" (docs/resolution-rules.md).
  const est = opts.extreme === 'low' ? 'lowest' : 'highest';
  if (opts.kind === 'wu') {
    // The catalog's page for its own station; another station swaps the last path segment.
    const base = city.stationPage.includes('wunderground.com')
      ? city.stationPage.replace(/[^/]+$/, '')
      : 'https://www.wunderground.com/history/daily/';
    const url = base + station;
    return {
      resolutionSource: url,
      description: [
        `This market will resolve to the temperature range that contains the ${est} temperature recorded at the ${name} Station in degrees ${unitWord} on ${day}.`,
        `The resolution source for this market will be information from Wunderground, specifically the ${est} temperature recorded for all times on this day for the ${name} Station, available here: ${url}.`,
        'To toggle between Fahrenheit and Celsius, click the gear icon next to the search bar and switch the Temperature setting between °F and °C.',
        'This market can not resolve until the first data point for the following date has been published on the resolution source.',
        `The resolution source for this market measures temperatures to whole degrees ${unitWord} (eg, ${eg}). Thus, this is the level of precision that will be used when resolving the market.`,
        "Any revisions to temperatures recorded after data is finalized for this market's timeframe will not be considered for this market's resolution.",
      ].join('\n\n'),
    };
  }
  if (opts.kind === 'hko') {
    // The Hong Kong Observatory wording (the 16 Mar '26 market's text).
    const url = 'https://www.weather.gov.hk/en/cis/climat.htm';
    return {
      resolutionSource: url,
      description: [
        `This market will resolve to the temperature range that contains the highest temperature recorded by the Hong Kong Observatory in degrees Celsius on ${day}.`,
        `The resolution source for this market will be information from the Hong Kong Observatory, specifically the "Absolute Daily Max (deg. C)" the specified date once information is finalized in the relevant "Daily Extract", available here: ${url}`,
        'This market can not resolve to "Yes" until data for this date has been finalized.',
        'The resolution source for this market measures temperatures in Celsius to one decimal place (eg, 9.1°C). Thus, this is the level of precision that will be used when resolving the market.',
        "Any revisions to temperatures recorded after data is finalized for this market's timeframe will not be considered for this market's resolution.",
      ].join('\n\n'),
    };
  }
  const url = `https://www.weather.gov/wrh/timeseries?site=${station.toLowerCase()}`;
  const hourly = opts.hourly ?? city.country === 'US';
  return {
    resolutionSource: url,
    description: [
      `This market will resolve to the temperature range that contains the ${est} temperature recorded by NOAA at the ${name} Station in degrees ${unitWord} on ${day}.`,
      `The resolution source for this market will be information from NOAA, specifically the ${est} reading under the "Temp" column for all times on this day, available here: ${url}`,
      // US markets name the timeseries page's hourly view (rule kind noaa-hourly); others read all times.
      ...(hourly
        ? ['This market will resolve off of the Hourly Data provided using the "Show Hourly Data" button.']
        : []),
      'If NOAA data for the observation date is unavailable by 11:59 PM ET on the day following the observation date, the Weather Underground Daily Observations table will be used as the resolution source.',
      `To toggle between Fahrenheit and Celsius, click the "${unitWord === 'Celsius' ? 'Switch to Metric Units' : 'Switch to US Units w/ kts'}" button until the relevant table displays °${unitWord[0]}.`,
      'This market can not resolve until the first data point for the following date has been published on the resolution source.',
      `The resolution source for this market measures temperatures to whole degrees ${unitWord} (eg, ${eg}). Thus, this is the level of precision that will be used when resolving the market.`,
      "Revisions to temperatures recorded within this market's timeframe will be considered until the first datapoint for the following date has been published, after which any alterations will not be considered.",
    ].join('\n\n'),
  };
}

/** The markets reported on NOAA's timeseries (late August 2026 for São Paulo and Seattle); WU elsewhere. */
export const SIM_NOAA_CITIES: ReadonlySet<string> = new Set(['sao-paulo', 'seattle', 'tel-aviv']);
