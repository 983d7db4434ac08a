/**
 * Load generator child process: autocannon's programmatic API, so the load never shares an event
 * loop with the server or the driver. Input is one JSON argument; output is one JSON line on
 * stdout. Every answer must be 2xx: a benchmark of error pages proves nothing.
 *
 * One load:   '{"url":"http://127.0.0.1:8402/v1/cities","connections":16,"durationS":5}'
 * A series:   '{"series":[{"url":…,"pid":123},{"url":…,"pid":456}],"connections":16,"durationS":1,"rounds":41,"warmupS":1}'
 *
 * A series alternates between its two targets A B, B A, A B, … in this one process, so the two
 * loads of a round are adjacent in time and no process start sits between them; around each load
 * it reads the target's CPU time from /proc, which gives the CPU each request cost.
 */
import { createRequire } from 'node:module';
import { cpuSeconds } from './util.ts';

export type LoadInput = { url: string; headers?: Record<string, string>; connections: number; durationS: number };
export type LoadResult = {
  rps: number;
  requests: number;
  durationS: number;
  p50Ms: number;
  p99Ms: number;
  bytesPerReq: number;
  non2xx: number;
  errors: number;
};
export type SeriesTarget = { url: string; headers?: Record<string, string>; pid: number };
export type SeriesInput = {
  series: [SeriesTarget, SeriesTarget];
  connections: number;
  durationS: number;
  rounds: number;
  warmupS: number;
};
export type Measured = LoadResult & { cpuUs: number };
export type SeriesResult = { rounds: [Measured, Measured][] };

type AutocannonResult = {
  requests: { total: number };
  duration: number;
  latency: { p50: number; p99: number };
  throughput: { total: number };
  non2xx: number;
  errors: number;
  timeouts: number;
};
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: object) => Promise<AutocannonResult>;

async function run(
  url: string,
  headers: Record<string, string> | undefined,
  connections: number,
  durationS: number,
): Promise<LoadResult> {
  const r = await autocannon({ url, headers: headers ?? {}, connections, duration: durationS, pipelining: 1 });
  return {
    rps: r.requests.total / r.duration,
    requests: r.requests.total,
    durationS: r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    bytesPerReq: r.requests.total ? r.throughput.total / r.requests.total : 0,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

async function measured(t: SeriesTarget, connections: number, durationS: number): Promise<Measured> {
  const before = cpuSeconds(t.pid);
  const r = await run(t.url, t.headers, connections, durationS);
  if (r.non2xx > 0 || r.errors > 0)
    throw new Error(`${t.url}: ${r.non2xx} non-2xx answers and ${r.errors} errors under load`);
  return { ...r, cpuUs: ((cpuSeconds(t.pid) - before) * 1e6) / r.requests };
}

const input = JSON.parse(process.argv[2] ?? '{}') as LoadInput | SeriesInput;
if ('series' in input) {
  const [a, b] = input.series;
  await run(a.url, a.headers, input.connections, input.warmupS);
  await run(b.url, b.headers, input.connections, input.warmupS);
  const rounds: SeriesResult['rounds'] = [];
  for (let r = 0; r < input.rounds; r++) {
    if (r % 2 === 0) {
      const x = await measured(a, input.connections, input.durationS);
      rounds.push([x, await measured(b, input.connections, input.durationS)]);
    } else {
      const y = await measured(b, input.connections, input.durationS);
      rounds.push([await measured(a, input.connections, input.durationS), y]);
    }
  }
  process.stdout.write(JSON.stringify({ rounds } satisfies SeriesResult) + '\n');
} else {
  process.stdout.write(JSON.stringify(await run(input.url, input.headers, input.connections, input.durationS)) + '\n');
}
