/**
 * Rule texts of real daily-high events (Gamma `description` and `resolutionSource`), one per known
 * wording, transcribed from the captures listed in docs/resolution-rules.md, with the reading each must
 * parse to. Section numbers follow that document. `resolutionSource` is null where only the market's
 * text was captured.
 */
export type RuleFixture = {
  name: string;
  description: string;
  resolutionSource: string | null;
  expected: {
    source: string;
    /** Which reports count and the rounding (src/buckets/daily-high.ts). */
    kind: string | null;
    station: string | null;
    unit: 'C' | 'F' | null;
    precision: number | null;
    fallback: string | null;
  };
};

export const RULE_FIXTURES: RuleFixture[] = [
  {
    name: '1. WU legacy, NYC 30 Dec 25 (event capture)',
    resolutionSource: 'https://www.wunderground.com/history/daily/us/ny/new-york-city/KLGA',
    expected: { source: 'wu', kind: 'wu-table', station: 'KLGA', unit: 'F', precision: 1, fallback: null },
    description: [
      "This market will resolve to the temperature range that contains the highest temperature recorded at the LaGuardia Airport Station in degrees Fahrenheit on 30 Dec '25.",
      'The resolution source for this market will be information from Wunderground, specifically the highest temperature recorded for all times on this day by the Forecast for the LaGuardia Airport Station once information is finalized, available here: https://www.wunderground.com/history/daily/us/ny/new-york-city/KLGA.',
      'To toggle between Fahrenheit and Celsius, click the gear icon next to the search bar and switch the Temperature setting between °F and °C.',
      'This market can not resolve to "Yes" until all data for this date has been finalized.',
      'The resolution source for this market measures temperatures to whole degrees Fahrenheit (eg, 21°F). Thus, this is the level of precision that will be used when resolving the market.',
      "Any revisions to temperatures recorded after data is finalized for this market's timeframe will not be considered for this market's resolution.",
    ].join('\n\n'),
  },
  {
    name: '2. WU generic, London 27 May 26',
    resolutionSource: null,
    expected: { source: 'wu', kind: 'wu-table', station: 'EGLC', unit: 'C', precision: 1, fallback: null },
    description: [
      "This market will resolve to the temperature range that contains the highest temperature recorded at the London City Airport Station in degrees Celsius on 27 May '26.",
      'The resolution source for this market will be information from Wunderground, specifically the highest temperature recorded for all times on this day for the London City Airport Station, available here: https://www.wunderground.com/history/daily/gb/london/EGLC.',
      'To toggle between Fahrenheit and Celsius, click the gear icon next to the search bar and switch the Temperature setting between °F and °C.',
      'This market can not resolve until the first data point for the following date has been published on the resolution source.',
      'The resolution source for this market measures temperatures to whole degrees Celsius (eg, 9°C). Thus, this is the level of precision that will be used when resolving the market.',
      "Any revisions to temperatures recorded after data is finalized for this market's timeframe will not be considered for this market's resolution.",
    ].join('\n\n'),
  },
  {
    name: '3. WU Daily Observations, Ankara 20 Aug 26 (event capture)',
    resolutionSource: 'https://www.wunderground.com/history/daily/tr/%C3%A7ubuk/LTAC',
    expected: { source: 'wu', kind: 'wu-table', station: 'LTAC', unit: 'C', precision: 1, fallback: null },
    description: [
      "This market will resolve based on the highest temperature recorded in the 'Daily Observations' table on Weather Underground, not the figure displayed in the 'Day High & Low' summary section; in the event of any discrepancy between the two, the Daily Observations table shall be the primary resolution source not the Day High & Low section.",
      "This market will resolve to the temperature range that contains the highest temperature recorded at the Esenboğa Intl Airport Station in degrees Celsius on 20 Aug '26.",
      'The resolution source for this market will be information from Wunderground, specifically the highest temperature recorded for all times on this day for the Esenboğa Intl Airport Station, available here: https://www.wunderground.com/history/daily/tr/%C3%A7ubuk/LTAC.',
      'To toggle between Fahrenheit and Celsius, click the gear icon next to the search bar and switch the Temperature setting between °F and °C.',
      'This market can not resolve until the first data point for the following date has been published on the resolution source.',
      'The resolution source for this market measures temperatures to whole degrees Celsius (eg, 9°C). Thus, this is the level of precision that will be used when resolving the market.',
      "Revisions to temperatures recorded within this market's timeframe will be considered until the first datapoint for the following date has been published, after which any alterations will not be considered.",
    ].join('\n\n'),
  },
  {
    name: '3b. Ankara, rule only on the bucket market',
    resolutionSource: null,
    expected: { source: 'wu', kind: 'wu-table', station: 'LTAC', unit: 'C', precision: 1, fallback: null },
    description: [
      "This market will resolve based on the highest temperature recorded in the 'Daily Observations' table on Weather Underground, not the figure displayed in the 'Day High & Low' summary section; in the event of any discrepancy between the two, the Daily Observations table shall be the primary resolution source not the Day High & Low section.",
      "This market will resolve to the temperature range that contains the highest temperature recorded at the Esenboğa Intl Airport Station in degrees Celsius on 20 Aug '26.",
      'The resolution source for this market will be information from Wunderground, specifically the highest temperature recorded for all times on this day for the Esenboğa Intl Airport Station, available here: https://www.wunderground.com/history/daily/tr/%C3%A7ubuk/LTAC.',
      'To toggle between Fahrenheit and Celsius, click the gear icon next to the search bar and switch the Temperature setting between °F and °C.',
      'This market can not resolve until the first data point for the following date has been published on the resolution source.',
      'The resolution source for this market measures temperatures to whole degrees Celsius (eg, 9°C). Thus, this is the level of precision that will be used when resolving the market.',
      "Revisions to temperatures recorded within this market's timeframe will be considered until the first datapoint for the following date has been published, after which any alterations will not be considered.",
    ].join('\n\n'),
  },
  {
    name: '4. NOAA + WU fallback, Sao Paulo 29 Aug 26',
    resolutionSource: null,
    expected: { source: 'noaa', kind: 'noaa-all', station: 'SBGR', unit: 'C', precision: 1, fallback: 'wu' },
    description: [
      "This market will resolve to the temperature range that contains the highest temperature recorded by NOAA at the Sao Paulo-Guarulhos International Airport Station in degrees Celsius on 29 Aug '26.",
      'The resolution source for this market will be information from NOAA, specifically the highest reading under the "Temp" column for all times on this day, available here: https://www.weather.gov/wrh/timeseries?site=sbgr',
      'If NOAA data for the observation date is unavailable by 11:59 PM ET on the day following the observation date, the Weather Underground Daily Observations table will be used as the resolution source.',
      'To toggle between Fahrenheit and Celsius, click the "Switch to Metric Units" button until the relevant table displays °C.',
      'This market can not resolve until the first data point for the following date has been published on the resolution source.',
      'The resolution source for this market measures temperatures to whole degrees Celsius (eg, 9°C). Thus, this is the level of precision that will be used when resolving the market.',
      "Revisions to temperatures recorded within this market's timeframe will be considered until the first datapoint for the following date has been published, after which any alterations will not be considered.",
    ].join('\n\n'),
  },
  {
    name: '5. NOAA Hourly Data + WU fallback, Seattle 29 Aug 26',
    resolutionSource: null,
    expected: { source: 'noaa', kind: 'noaa-hourly', station: 'KSEA', unit: 'F', precision: 1, fallback: 'wu' },
    description: [
      "This market will resolve to the temperature range that contains the highest temperature recorded by NOAA at the Seattle-Tacoma International Airport Station in degrees Fahrenheit on 29 Aug '26.",
      'The resolution source for this market will be information from NOAA, specifically the highest reading under the "Temp" column for all times on this day, available here: https://www.weather.gov/wrh/timeseries?site=ksea',
      'This market will resolve off of the Hourly Data provided using the "Show Hourly Data" button.',
      'If NOAA data for the observation date is unavailable by 11:59 PM ET on the day following the observation date, the Weather Underground Daily Observations table will be used as the resolution source.',
      'To toggle between Fahrenheit and Celsius, click the "Switch to US Units w/ kts" button until the relevant table displays °F.',
      'This market can not resolve until the first data point for the following date has been published on the resolution source.',
      'The resolution source for this market measures temperatures to whole degrees Fahrenheit (eg, 21°F). Thus, this is the level of precision that will be used when resolving the market.',
      "Revisions to temperatures recorded within this market's timeframe will be considered until the first datapoint for the following date has been published, after which any alterations will not be considered.",
    ].join('\n\n'),
  },
  {
    name: '6. Hong Kong Observatory, 16 Mar 26',
    resolutionSource: null,
    expected: {
      source: 'hko',
      kind: 'hko',
      station: 'https://www.weather.gov.hk/en/cis/climat.htm',
      unit: 'C',
      precision: 0.1,
      fallback: null,
    },
    description: [
      "This market will resolve to the temperature range that contains the highest temperature recorded by the Hong Kong Observatory in degrees Celsius on 16 Mar '26.",
      'The resolution source for this market will be information from the Hong Kong Observatory, specifically the "Absolute Daily Max (deg. C)" the specified date once information is finalized in the relevant "Daily Extract", available here: https://www.weather.gov.hk/en/cis/climat.htm',
      'This market can not resolve to "Yes" until data for this date has been finalized.',
      'The resolution source for this market measures temperatures in Celsius to one decimal place (eg, 9.1°C). Thus, this is the level of precision that will be used when resolving the market.',
      "Any revisions to temperatures recorded after data is finalized for this market's timeframe will not be considered for this market's resolution.",
    ].join('\n\n'),
  },
  {
    name: '7. Taipei CWA, 16 Mar 26',
    resolutionSource: null,
    expected: {
      source: 'cwa',
      kind: 'cwa',
      station: 'https://www.cwa.gov.tw/V8/C/W/OBS_Station.html?ID=46692',
      unit: 'C',
      precision: 0.1,
      fallback: null,
    },
    description: [
      "This market will resolve to the temperature range that contains the highest temperature recorded by Taipei's Central Weather Administration in degrees Celsius on 16 Mar '26.",
      'The resolution source for this market will be information from the Taipei Central Weather Administration, specifically the highest reading under the "Temperature" column on the specified date once information is finalized for all hours on that date, available here: https://www.cwa.gov.tw/V8/C/W/OBS_Station.html?ID=46692',
      'This market can not resolve to "Yes" until data for this date has been finalized.',
      'The resolution source for this market measures temperatures in Celsius to one decimal place (eg, 9.1°C). Thus, this is the level of precision that will be used when resolving the market.',
      "Any revisions to temperatures recorded after data is finalized for this market's timeframe will not be considered for this market's resolution.",
    ].join('\n\n'),
  },
];
