/**
 * Measures a route of the real server against the same bytes from the ceiling process: one load
 * generator process (scripts/bench/load.ts) runs against each in turn with the same connections
 * and duration, back to back, the order alternating by round (A B, B A, …) so drift in the
 * machine's speed favours neither. The figure is the median of the per-round ratios.
 */
import { join } from 'node:path';
import type { LoadInput, LoadResult, SeriesInput, SeriesResult } from './load.ts';
import { median, ROOT, round, runJson, spread } from './util.ts';

export const LOAD_SCRIPT = join(ROOT, 'scripts', 'bench', 'load.ts');

/** A process under load: where to send requests, and its pid for CPU accounting. */
export type Target = { url: string; pid: number };
export type PairSettings = { connections: number; durationS: number; rounds: number; warmupS: number };
export type PairResult = {
  serverRps: number;
  ceilingRps: number;
  ratio: number;
  ratioSpread: number;
  serverP99Ms: number;
  ceilingP99Ms: number;
  bytesPerReq: number;
  /** CPU time each process spent per request (µs), and ceiling / server: the efficiency behind the req/s ratio. */
  serverCpuUsPerReq: number;
  ceilingCpuUsPerReq: number;
  cpuRatio: number;
  rounds: { server: number; ceiling: number; ratio: number; serverCpuUs: number; ceilingCpuUs: number }[];
};

export function load(
  url: string,
  headers: Record<string, string>,
  connections: number,
  durationS: number,
): Promise<LoadResult> {
  return runJson<LoadResult>(LOAD_SCRIPT, { url, headers, connections, durationS } satisfies LoadInput).then((r) => {
    if (r.non2xx > 0 || r.errors > 0)
      throw new Error(`${url}: ${r.non2xx} non-2xx answers and ${r.errors} errors under load`);
    return r;
  });
}

export async function pair(
  serverTarget: Target,
  ceilingTarget: Target,
  headers: Record<string, string>,
  s: PairSettings,
): Promise<PairResult> {
  const input: SeriesInput = {
    series: [{ ...serverTarget, headers }, ceilingTarget],
    connections: s.connections,
    durationS: s.durationS,
    rounds: s.rounds,
    warmupS: s.warmupS,
  };
  const series = await runJson<SeriesResult>(LOAD_SCRIPT, input);
  const server = series.rounds.map((r) => r[0]);
  const ceiling = series.rounds.map((r) => r[1]);
  const rounds: PairResult['rounds'] = series.rounds.map(([a, b]) => ({
    server: Math.round(a.rps),
    ceiling: Math.round(b.rps),
    ratio: a.rps / b.rps,
    serverCpuUs: round(a.cpuUs),
    ceilingCpuUs: round(b.cpuUs),
  }));
  const ratios = rounds.map((r) => r.ratio);
  const serverCpu = median(rounds.map((r) => r.serverCpuUs));
  const ceilingCpu = median(rounds.map((r) => r.ceilingCpuUs));
  return {
    serverCpuUsPerReq: serverCpu,
    ceilingCpuUsPerReq: ceilingCpu,
    cpuRatio: median(rounds.map((r) => r.ceilingCpuUs / r.serverCpuUs)),
    serverRps: median(server.map((x) => x.rps)),
    ceilingRps: median(ceiling.map((x) => x.rps)),
    ratio: median(ratios),
    ratioSpread: spread(ratios),
    serverP99Ms: median(server.map((x) => x.p99Ms)),
    ceilingP99Ms: median(ceiling.map((x) => x.p99Ms)),
    bytesPerReq: Math.round(median(server.map((x) => x.bytesPerReq))),
    rounds,
  };
}
