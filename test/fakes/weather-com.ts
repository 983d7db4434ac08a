import { localDate } from '../../src/lib/local-day.ts';
import { startFakeServer, type FakeServer } from './upstream.ts';

/**
 * weather.com v1 historical observations:
 * `GET /v1/location/{ICAO}:9:{CC}/observations/historical.json?apiKey=&units=e|m&startDate=&endDate=`.
 * Observations are stored in °C tenths and rendered as whole °F (`units=e`) or whole °C (`units=m`)
 * like the real API; the date range is the station-LOCAL calendar day, so each location is
 * registered with its timezone. Rows carry the provider's rolling `max_temp`, which clients must
 * ignore (it is set deliberately wrong here). A wrong or missing apiKey gets 401.
 */
export type FakeWeatherCom = FakeServer & {
  apiKey: string;
  setObservations(locationId: string, timezone: string, obs: { atMs: number; tempC: number }[]): void;
  addObservation(locationId: string, timezone: string, obs: { atMs: number; tempC: number }): void;
};

export async function startFakeWeatherCom(opts: { apiKey?: string } = {}): Promise<FakeWeatherCom> {
  const apiKey = opts.apiKey ?? 'fake-wu-key-0123456789';
  const stations = new Map<string, { timezone: string; obs: { atMs: number; tempC: number }[] }>();
  const server = await startFakeServer('weather.com', (req) => {
    // Location ids travel with literal colons (`KLGA:9:US`); the encoded form (`KLGA%3A9%3AUS`) is
    // not what the site sends and is refused like any unknown path.
    const m = /^\/v1\/location\/([A-Za-z0-9]+:9:[A-Za-z]{2})\/observations\/historical\.json$/.exec(req.path);
    if (!m) return { status: 404, body: { errors: [{ error: { code: 'NDF-0001', message: 'not found' } }] } };
    if (req.query.get('apiKey') !== apiKey)
      return { status: 401, body: { errors: [{ error: { code: 'CDN-0001', message: 'Invalid apiKey.' } }] } };
    const loc = m[1]!;
    const units = req.query.get('units') === 'e' ? 'e' : 'm';
    const start = req.query.get('startDate') ?? '';
    const end = req.query.get('endDate') ?? start;
    const st = stations.get(loc);
    if (!st) return { status: 400, body: { errors: [{ error: { code: 'PAE-0001', message: 'Invalid location' } }] } };
    const inRange = st.obs.filter((o) => {
      const d = localDate(st.timezone, o.atMs).replaceAll('-', '');
      return d >= start && d <= end;
    });
    const render = (c: number) => Math.round(units === 'e' ? c * 1.8 + 32 : c);
    return {
      status: 200,
      body: {
        metadata: {
          language: 'en-US',
          transaction_id: 'fake',
          version: '1',
          location_id: loc,
          units,
          expire_time_gmt: 0,
          status_code: 200,
        },
        observations: inRange.map((o) => ({
          key: loc.split(':')[0],
          class: 'observation',
          expire_time_gmt: Math.floor(o.atMs / 1000) + 7200,
          obs_id: loc.split(':')[0],
          obs_name: 'Fake Station',
          valid_time_gmt: Math.floor(o.atMs / 1000),
          day_ind: 'D',
          temp: render(o.tempC),
          wx_icon: 28,
          icon_extd: 2800,
          wx_phrase: 'Mostly Cloudy',
          dewPt: render(o.tempC - 8),
          rh: 60,
          max_temp: render(o.tempC + 25),
          min_temp: render(o.tempC - 10),
          wspd: 9,
          gust: null,
          pressure: 30.01,
        })),
      },
    };
  });
  return Object.assign(server, {
    apiKey,
    setObservations: (loc: string, timezone: string, obs: { atMs: number; tempC: number }[]) => {
      stations.set(loc, { timezone, obs: [...obs] });
    },
    addObservation: (loc: string, timezone: string, o: { atMs: number; tempC: number }) => {
      const st = stations.get(loc) ?? { timezone, obs: [] };
      st.obs.push(o);
      stations.set(loc, st);
    },
  });
}
