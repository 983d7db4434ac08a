/**
 * Measures a route of the real server against the same bytes from the ceiling process: the load
 * generator (scripts/bench/load.ts, its own process) runs against each in turn with the same
 * connections and duration, back to back, and the order alternates by round so slow drift in the
 * machine's load favours neither. The figure is the median of the per-round ratios.
 */
import { join } from 'node:path';
import type { LoadInput, LoadResult } from './load.ts';
import { cpuSeconds, median, ROOT, round, runJson, spread } from './util.ts';

export const LOAD_SCRIPT = join(ROOT, 'scripts', 'bench', 'load.ts');

/** A process under load: where to send requests, and its pid for CPU accounting. */
export type Target = { url: string; pid: number };
export type PairSettings = { connections: number; durationS: number; rounds: number; warmupS: number };
export type PairResult = {
  serverRps: number; ceilingRps: number; ratio: number; ratioSpread: number;
  serverP99Ms: number; ceilingP99Ms: number; bytesPerReq: number;
  /** CPU time each process spent per request (µs), and ceiling / server: the efficiency behind the req/s ratio. */
  serverCpuUsPerReq: number; ceilingCpuUsPerReq: number; cpuRatio: number;
  rounds: { server: number; ceiling: number; ratio: number; serverCpuUs: number; ceilingCpuUs: number }[];
};

export function load(url: string, headers: Record<string, string>, connections: number, durationS: number): Promise<LoadResult> {
  return runJson<LoadResult>(LOAD_SCRIPT, { url, headers, connections, durationS } satisfies LoadInput).then((r) => {
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx answers and ${r.errors} errors under load`);
    return r;
  });
}

/** One timed load, with the CPU the target process spent serving it (µs per request). */
async function measured(t: Target, headers: Record<string, string>, s: PairSettings): Promise<LoadResult & { cpuUs: number }> {
  const before = cpuSeconds(t.pid);
  const r = await load(t.url, headers, s.connections, s.durationS);
  return { ...r, cpuUs: ((cpuSeconds(t.pid) - before) * 1e6) / r.requests };
}

export async function pair(serverTarget: Target, ceilingTarget: Target, headers: Record<string, string>, s: PairSettings): Promise<PairResult> {
  await load(serverTarget.url, headers, s.connections, s.warmupS);
  await load(ceilingTarget.url, {}, s.connections, s.warmupS);
  const rounds: PairResult['rounds'] = [];
  const server: LoadResult[] = [];
  const ceiling: LoadResult[] = [];
  for (let r = 0; r < s.rounds; r++) {
    let a: Awaited<ReturnType<typeof measured>>;
    let b: Awaited<ReturnType<typeof measured>>;
    if (r % 2 === 0) {
      a = await measured(serverTarget, headers, s);
      b = await measured(ceilingTarget, {}, s);
    } else {
      b = await measured(ceilingTarget, {}, s);
      a = await measured(serverTarget, headers, s);
    }
    server.push(a);
    ceiling.push(b);
    rounds.push({ server: Math.round(a.rps), ceiling: Math.round(b.rps), ratio: a.rps / b.rps, serverCpuUs: round(a.cpuUs), ceilingCpuUs: round(b.cpuUs) });
  }
  const ratios = rounds.map((r) => r.ratio);
  const serverCpu = median(rounds.map((r) => r.serverCpuUs));
  const ceilingCpu = median(rounds.map((r) => r.ceilingCpuUs));
  return {
    serverCpuUsPerReq: serverCpu, ceilingCpuUsPerReq: ceilingCpu, cpuRatio: median(rounds.map((r) => r.ceilingCpuUs / r.serverCpuUs)),
    serverRps: median(server.map((x) => x.rps)), ceilingRps: median(ceiling.map((x) => x.rps)),
    ratio: median(ratios), ratioSpread: spread(ratios),
    serverP99Ms: median(server.map((x) => x.p99Ms)), ceilingP99Ms: median(ceiling.map((x) => x.p99Ms)),
    bytesPerReq: Math.round(median(server.map((x) => x.bytesPerReq))), rounds,
  };
}
