/**
 * Load generator child process: autocannon's programmatic API against one URL, so the load never
 * shares an event loop with the server or the driver. Input is one JSON argument; output is one
 * JSON line on stdout. Every answer must be 2xx: a benchmark of error pages proves nothing.
 *
 * node scripts/bench/load.ts '{"url":"http://127.0.0.1:8402/v1/cities","connections":16,"durationS":5}'
 */
import { createRequire } from 'node:module';

export type LoadInput = { url: string; headers?: Record<string, string>; connections: number; durationS: number };
export type LoadResult = { rps: number; requests: number; durationS: number; p50Ms: number; p99Ms: number; bytesPerReq: number; non2xx: number; errors: number };

type AutocannonResult = {
  requests: { total: number }; duration: number; latency: { p50: number; p99: number };
  throughput: { total: number }; non2xx: number; errors: number; timeouts: number;
};
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: object) => Promise<AutocannonResult>;

const input = JSON.parse(process.argv[2] ?? '{}') as LoadInput;
const r = await autocannon({ url: input.url, headers: input.headers ?? {}, connections: input.connections, duration: input.durationS, pipelining: 1 });
const out: LoadResult = {
  rps: r.requests.total / r.duration, requests: r.requests.total, durationS: r.duration, p50Ms: r.latency.p50, p99Ms: r.latency.p99,
  bytesPerReq: r.requests.total ? r.throughput.total / r.requests.total : 0, non2xx: r.non2xx, errors: r.errors + r.timeouts,
};
process.stdout.write(JSON.stringify(out) + '\n');
