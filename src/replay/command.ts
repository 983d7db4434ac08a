import type { Catalog } from '../cities/catalog.ts';
import { isValidDate } from '../lib/local-day.ts';
import type { Clock } from '../lib/clock.ts';
import { UpstreamError } from '../lib/errors.ts';
import { parseFlags, requireValue, UsageError } from '../lib/flags.ts';
import { ReplayInputError } from './errors.ts';
import { REPLAY_HELP } from './help.ts';
import { fetchReplayMarket, marketFromEventJson, marketFromLabels, stationCheck, type ReplayMarket } from './market.ts';
import { fetchObservations, OBSERVATION_FORMATS, parseObservationFile } from './observations.ts';
import { formatReplay, runReplay } from './run.ts';

type ReplayIo = {
  stdout(text: string): void;
  stderr(text: string): void;
  readFile(path: string): string;
  clock: Clock;
  catalog: Catalog;
  /** Read only when something is fetched: a file-only replay needs no configuration. */
  upstreams(): Parameters<typeof fetchObservations>[0];
};

const REPLAY_EXIT = { ok: 0, failure: 1, input: 2 } as const;

export async function replayCommand(argv: readonly string[], io: ReplayIo): Promise<number> {
  try {
    const flags = parseFlags(argv, {
      strings: ['city', 'date', 'observations', 'format', 'market', 'buckets'],
      booleans: ['json', 'force'],
    });
    const slug = requireValue(flags, 'city');
    const date = requireValue(flags, 'date');
    // Any catalog city can be replayed (Hong Kong and the other cities CITIES=all may serve), not only the served ones.
    const city = io.catalog.get(slug) ?? io.catalog.all.find((c) => c.slug === slug);
    if (!city) throw new UsageError(`unknown city ${JSON.stringify(slug)} (GET /v1/cities lists the served ones)`);
    if (!isValidDate(date))
      throw new UsageError(`--date must be a calendar date YYYY-MM-DD, got ${JSON.stringify(date)}`);
    const format = OBSERVATION_FORMATS.find((f) => f === flags.values.format);
    if (flags.values.format !== undefined && !format)
      throw new UsageError(`--format must be one of ${OBSERVATION_FORMATS.join(', ')}`);
    if (flags.values.market !== undefined && flags.values.buckets !== undefined)
      throw new UsageError('give --market or --buckets, not both');

    // Inputs are all read before anything is fetched, so a bad file fails fast and offline.
    const obsPath = flags.values.observations;
    const file =
      obsPath === undefined ? null : parseObservationFile(readInput(io, obsPath, 'observations'), city, format);
    let market: ReplayMarket | null = null;
    if (flags.values.buckets !== undefined) market = marketFromLabels(flags.values.buckets);
    else if (flags.values.market !== undefined)
      market = marketFromEventJson(parseJson(readInput(io, flags.values.market, 'market'), 'market'));

    const upstreams = file && market ? null : io.upstreams();
    // The market first: its rule says which station and feed the day resolves on.
    market ??= await fetchReplayMarket(upstreams!, city, date);
    const check = stationCheck(market.rule, city);
    const force = flags.on.has('force');
    if (check.refuse && !force) throw new ReplayInputError(`${check.refuse}; pass --force to replay anyway`);
    const obs = file
      ? { source: `${file.format} file ${obsPath}`, observations: file.observations }
      : await fetchObservations(upstreams!, {
          city,
          date,
          clock: io.clock,
          prefer: market.rule?.source === 'noaa' ? 'metar' : undefined,
        });
    if (!file && city.resolutionSource === 'hko' && obs.observations.length === 0)
      throw new ReplayInputError(
        "the Hong Kong Observatory's open data has only today's running maximum; pass --observations <file> (time,temp,unit)",
      );

    const notes = [check.note, check.refuse ? `forced: ${check.refuse}` : null].filter((n) => n !== null);
    const result = runReplay({ city, date, observations: obs.observations, source: obs.source, market, notes });
    io.stdout(flags.on.has('json') ? `${JSON.stringify(result, null, 2)}\n` : `${formatReplay(result)}\n`);
    return REPLAY_EXIT.ok;
  } catch (err) {
    const msg =
      err instanceof UpstreamError
        ? `${err.upstream}: ${err.message}`
        : err instanceof Error
          ? err.message
          : String(err);
    io.stderr(`isocast replay: ${msg}\n${err instanceof UsageError ? `\n${REPLAY_HELP}` : ''}`);
    return err instanceof UsageError || err instanceof ReplayInputError ? REPLAY_EXIT.input : REPLAY_EXIT.failure;
  }
}

function readInput(io: ReplayIo, path: string, what: string): string {
  try {
    return io.readFile(path);
  } catch (err) {
    throw new ReplayInputError(
      `cannot read ${what} file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ReplayInputError(`${what} file is not JSON: ${(err as Error).message}`);
  }
}
