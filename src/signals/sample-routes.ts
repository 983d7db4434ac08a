import { Hono } from 'hono';
import type { AppEnv } from '../lib/http.ts';
import { parseQuery, replyRaw } from '../lib/http.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { SampleQuery, SampleSignal } from './schemas.ts';
import { SYNTHETIC_SAMPLE } from './synthetic-sample.ts';

/**
 * `/v1/sample`: a free look at what a signal is. Only ever seq 1 of a city (never the latest, which
 * is what buyers pay for); the fixed synthetic example when the city is omitted, unknown, or has
 * no signal yet.
 */
export function sampleRoutes(deps: { isCity(slug: string): boolean; payload(city: string, seq: number): string | null }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const synthetic = JSON.stringify({ ...SYNTHETIC_SAMPLE, sample: true, synthetic: true });
  app.get('/v1/sample', (c) => {
    const { city } = parseQuery(c, SampleQuery);
    const stored = city !== undefined && deps.isCity(city) ? deps.payload(city, 1) : null;
    if (stored) return replyRaw(c, stored.slice(0, -1) + ',"sample":true,"synthetic":false}');
    return replyRaw(c, synthetic);
  });
  return app;
}

export const sampleDocs: RouteDoc[] = [{
  method: 'get', path: '/v1/sample', tags: ['signals'], summary: "A city's first signal, or a fixed synthetic example",
  query: SampleQuery,
  responses: { 200: { description: 'Sample signal', schema: SampleSignal } },
}];
