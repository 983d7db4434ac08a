import { Hono } from 'hono';
import { type AppEnv, parseQuery, replyJsonText } from '../lib/http.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import type { SignalReader } from './read-store.ts';
import { SampleQuery, SampleSignal, SYNTHETIC_SAMPLE } from './schemas.ts';

/**
 * `/v1/sample`: seq 1 of a city once its latest seq is at least 2 (with one signal, seq 1 is the
 * latest, which is what buyers pay for); the fixed synthetic example otherwise.
 */
export function sampleRoutes(deps: Pick<SignalReader, 'payload' | 'latestSeq'> & { isCity(slug: string): boolean }) {
  const app = new Hono<AppEnv>();
  const synthetic = JSON.stringify({ ...SYNTHETIC_SAMPLE, sample: true, synthetic: true });
  app.get('/v1/sample', (c) => {
    const { city } = parseQuery(c, SampleQuery());
    const stored = city !== undefined && deps.isCity(city) && deps.latestSeq(city) >= 2 ? deps.payload(city, 1) : null;
    if (stored) return replyJsonText(c, stored.slice(0, -1) + ',"sample":true,"synthetic":false}');
    return replyJsonText(c, synthetic);
  });
  return app;
}

export const sampleDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/sample',
    tags: ['signals'],
    summary: "A city's first signal once it has a second, or a fixed synthetic example",
    query: SampleQuery,
    responses: { 200: { description: 'Sample signal', schema: SampleSignal } },
  },
];
