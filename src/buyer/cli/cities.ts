import { intFlag, parseFlags, UsageError } from '../../lib/flags.ts';
import { serverErrorText } from '../../../packages/isocast-client/src/index.ts';
import { createClient, serverFlags, serverUrl } from './client.ts';
import { CliError, EXIT, type CliIo } from './output.ts';

/** `isocast cities`: a newcomer's first question is which city to try (latestSeq >= 2 has a real free sample). */
const CITIES_FLAGS = serverFlags(['kind']);

/** What `/v1/cities?kind=` lists: the daily-high cities (the spec's list, the default), the low streams, or both. */
const CITY_KINDS = ['high', 'low', 'all'] as const;
type CityKind = (typeof CITY_KINDS)[number];

type City = { slug: string; displayName: string; timezone: string; unit: string; latestSeq: number; kind?: string };

export async function fetchCities(server: string, timeoutMs: number, kind: CityKind = 'high'): Promise<City[]> {
  const a = await createClient(server, timeoutMs).request('GET', `/v1/cities?kind=${kind}`);
  if (a.status !== 200 || !Array.isArray(a.body.cities))
    throw new CliError(`cannot list the cities: HTTP ${a.status}: ${serverErrorText(a.status, a.body)}`);
  return a.body.cities as City[];
}

export async function citiesCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, CITIES_FLAGS);
  const server = serverUrl(flags, io.envServer);
  const kind = (flags.values.kind ?? 'high') as CityKind;
  if (!CITY_KINDS.includes(kind))
    throw new UsageError(`--kind must be high, low or all, not ${JSON.stringify(flags.values.kind)}`);
  const cities = await fetchCities(server, intFlag(flags, 'timeout', { fallback: 15, min: 1 }) * 1000, kind);
  const now = io.nowMs?.() ?? Date.now();
  const rows = cities.map((c) => ({
    slug: c.slug,
    kind: c.kind ?? 'high',
    localTime: new Date(now).toLocaleTimeString('en-GB', { timeZone: c.timezone, hour: '2-digit', minute: '2-digit' }),
    latestSeq: c.latestSeq,
  }));
  if (flags.on.has('json')) {
    for (const r of rows) io.stdout(JSON.stringify(r));
    return EXIT.ok;
  }
  const width = Math.max(...cities.map((c) => c.slug.length), 4);
  io.stdout(`${'slug'.padEnd(width)}  kind  local  latest seq  name`);
  for (const [i, r] of rows.entries())
    io.stdout(
      `${r.slug.padEnd(width)}  ${r.kind.padEnd(4)}  ${r.localTime}  ${String(r.latestSeq).padStart(10)}  ${cities[i]!.displayName}`,
    );
  const listed =
    kind === 'high'
      ? `${cities.length} cities (daily highs; --kind low lists their daily-low streams, --kind all both)`
      : `${cities.length} ${kind === 'low' ? 'low streams' : 'streams'}`;
  io.stderr(`${listed}; one with latest seq 2 or more has a real free sample (/v1/sample?city=<slug>)`);
  return EXIT.ok;
}
