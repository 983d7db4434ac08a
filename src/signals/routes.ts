import { Hono } from 'hono';
import type { Clock } from '../lib/clock.ts';
import { type AppEnv, closeWithDisclaimer, parseQuery, replyJsonBytes, replyJsonText } from '../lib/http.ts';
import { type RouteDoc, routeDoc } from '../lib/route-doc.ts';
import { LATENCY_MAX_ROWS, LATENCY_SPAN_MS, latencyWindows } from './latency.ts';
import type { SignalReader } from './read-store.ts';
import { LatencyStats, SampleQuery, SampleSignal, SYNTHETIC_SAMPLE } from './schemas.ts';

const LATENCY_CACHE_MS = 30_000;

/** The free signal routes: `/v1/sample` and `/v1/stats/latency`. */
export function signalsRoutes(deps: {
  reader: Pick<SignalReader, 'payload' | 'latestSeq' | 'latencyRows'>;
  isCity(slug: string): boolean;
  clock: Clock;
}): Hono<AppEnv> {
  const { reader } = deps;
  const app = new Hono<AppEnv>();
  // Seq 1 only once a city's latest seq is at least 2 (the latest is what buyers pay for), else the example.
  const synthetic = JSON.stringify({ ...SYNTHETIC_SAMPLE, sample: true, synthetic: true });
  app.get('/v1/sample', (c) => {
    const { city } = parseQuery(c, SampleQuery());
    const stored =
      city !== undefined && deps.isCity(city) && reader.latestSeq(city) >= 2 ? reader.payload(city, 1) : null;
    if (stored) return replyJsonText(c, stored.slice(0, -1) + ',"sample":true,"synthetic":false}');
    return replyJsonText(c, synthetic);
  });
  // Whatever the request rate, read and encoded at most once per LATENCY_CACHE_MS.
  let cached: { at: number; bytes: Buffer } | null = null;
  app.get('/v1/stats/latency', (c) => {
    const now = deps.clock.now();
    if (!cached || now - cached.at >= LATENCY_CACHE_MS || now < cached.at) {
      const { rows, truncated } = reader.latencyRows(now - LATENCY_SPAN_MS, LATENCY_MAX_ROWS);
      const body = { generatedAt: new Date(now).toISOString(), windows: latencyWindows(rows, now), truncated };
      cached = { at: now, bytes: Buffer.from(closeWithDisclaimer(c, JSON.stringify(body))) };
    }
    const age = Math.floor((now - cached.at) / 1000);
    return replyJsonBytes(cached.bytes, { headers: { 'cache-control': `public, max-age=${Math.max(0, 30 - age)}` } });
  });
  return app;
}

export const signalsDocs: RouteDoc[] = [
  routeDoc('get /v1/sample', 'signals', {
    summary: "A city's first signal once it has a second, or a fixed synthetic example",
    query: SampleQuery,
    responses: { 200: { description: 'Sample signal', schema: SampleSignal } },
  }),
  routeDoc('get /v1/stats/latency', 'signals', {
    summary: 'How fast a station report becomes a signal: p50/p90/p99 of each step, per source and city',
    description:
      'From the stored timestamps of every signal committed in the last 24 hours and 7 days: reportToAvailable ' +
      "(availableAt - reportedAt, the source's own lag), availableToObserved (observedAt - availableAt, our polling), " +
      'observedToStored (storedAt - observedAt, our work) and reportToStored (the whole path), in milliseconds, per ' +
      'source (channel) and per city. Free; computed at most once per 30 seconds and cached for every caller.',
    responses: { 200: { description: 'Latency figures', schema: LatencyStats } },
  }),
];
