import { Hono } from 'hono';
import type { Clock } from '../lib/clock.ts';
import { type AppEnv, closeWithDisclaimer, replyJsonBytes } from '../lib/http.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { LATENCY_MAX_ROWS, LATENCY_SPAN_MS, latencyWindows } from './latency.ts';
import { LatencyStats } from './schemas.ts';
import type { SignalReader } from './read-store.ts';

const LATENCY_CACHE_MS = 30_000;

/** `GET /v1/stats/latency`, free: whatever the request rate, read and encoded at most once per LATENCY_CACHE_MS. */
export function latencyRoutes(deps: { reader: Pick<SignalReader, 'latencyRows'>; clock: Clock }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  let cached: { at: number; bytes: Buffer } | null = null;
  app.get('/v1/stats/latency', (c) => {
    const now = deps.clock.now();
    if (!cached || now - cached.at >= LATENCY_CACHE_MS || now < cached.at) {
      const { rows, truncated } = deps.reader.latencyRows(now - LATENCY_SPAN_MS, LATENCY_MAX_ROWS);
      const body = { generatedAt: new Date(now).toISOString(), windows: latencyWindows(rows, now), truncated };
      cached = { at: now, bytes: Buffer.from(closeWithDisclaimer(c, JSON.stringify(body))) };
    }
    const age = Math.floor((now - cached.at) / 1000);
    return replyJsonBytes(cached.bytes, { headers: { 'cache-control': `public, max-age=${Math.max(0, 30 - age)}` } });
  });
  return app;
}

export const latencyDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/stats/latency',
    tags: ['signals'],
    summary: 'How fast a station report becomes a signal: p50/p90/p99 of each step, per source and city',
    description:
      'From the stored timestamps of every signal committed in the last 24 hours and 7 days: reportToAvailable ' +
      "(availableAt - reportedAt, the source's own lag), availableToObserved (observedAt - availableAt, our polling), " +
      'observedToStored (storedAt - observedAt, our work) and reportToStored (the whole path), in milliseconds, per ' +
      'source (channel) and per city. Free; computed at most once per 30 seconds and cached for every caller.',
    responses: { 200: { description: 'Latency figures', schema: LatencyStats } },
  },
];
