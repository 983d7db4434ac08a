/**
 * Measures a route of the real server against the same bytes from the ceiling process: the load
 * generator (scripts/bench/load.ts, its own process) runs against each in turn with the same
 * connections and duration, back to back, and the order alternates by round so slow drift in the
 * machine's load favours neither. The figure is the median of the per-round ratios.
 */
import { join } from 'node:path';
import type { LoadInput, LoadResult } from './load.ts';
import { median, ROOT, runJson, spread } from './util.ts';

export const LOAD_SCRIPT = join(ROOT, 'scripts', 'bench', 'load.ts');

export type PairSettings = { connections: number; durationS: number; rounds: number; warmupS: number };
export type PairResult = {
  serverRps: number; ceilingRps: number; ratio: number; ratioSpread: number;
  serverP99Ms: number; ceilingP99Ms: number; bytesPerReq: number;
  rounds: { server: number; ceiling: number; ratio: number }[];
};

export function load(url: string, headers: Record<string, string>, connections: number, durationS: number): Promise<LoadResult> {
  return runJson<LoadResult>(LOAD_SCRIPT, { url, headers, connections, durationS } satisfies LoadInput).then((r) => {
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx answers and ${r.errors} errors under load`);
    return r;
  });
}

export async function pair(serverUrl: string, ceilingUrl: string, headers: Record<string, string>, s: PairSettings): Promise<PairResult> {
  await load(serverUrl, headers, s.connections, s.warmupS);
  await load(ceilingUrl, {}, s.connections, s.warmupS);
  const rounds: PairResult['rounds'] = [];
  const server: LoadResult[] = [];
  const ceiling: LoadResult[] = [];
  for (let r = 0; r < s.rounds; r++) {
    let a: LoadResult;
    let b: LoadResult;
    if (r % 2 === 0) {
      a = await load(serverUrl, headers, s.connections, s.durationS);
      b = await load(ceilingUrl, {}, s.connections, s.durationS);
    } else {
      b = await load(ceilingUrl, {}, s.connections, s.durationS);
      a = await load(serverUrl, headers, s.connections, s.durationS);
    }
    server.push(a);
    ceiling.push(b);
    rounds.push({ server: Math.round(a.rps), ceiling: Math.round(b.rps), ratio: a.rps / b.rps });
  }
  const ratios = rounds.map((r) => r.ratio);
  return {
    serverRps: median(server.map((x) => x.rps)), ceilingRps: median(ceiling.map((x) => x.rps)),
    ratio: median(ratios), ratioSpread: spread(ratios),
    serverP99Ms: median(server.map((x) => x.p99Ms)), ceilingP99Ms: median(ceiling.map((x) => x.p99Ms)),
    bytesPerReq: Math.round(median(server.map((x) => x.bytesPerReq))), rounds,
  };
}
