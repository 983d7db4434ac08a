/**
 * Start-up against the Node floor: spawn to the first HTTP 200 of `build/isocast serve` next to
 * a Node 24 hello-world SEA (scripts/bench/hello.ts) built by the same buildSea path, each
 * binary copied alone into a temp directory, started in turn (isocast, floor, isocast, ...) so
 * load from elsewhere lands on both alike. Beside wall time, the CPU time each process had used
 * by its first 200 (/proc schedstat, every live thread): on a busy machine it moves far less than wall time. One start of each comes first and is not counted
 * (it extracts the SQLite addon and creates the database). Extra binaries (variants of isocast
 * built for a lever's before/after) join the same rotation.
 *
 * node scripts/bench/startup.ts '{"runs":9,"binaries":{"isocast":"build/isocast","no-code-cache":"/tmp/x"}}'
 */
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BINARY, BUILD_DIR, buildSea } from '../build-binary.ts';
import { cpuNs, freePort, median, ROOT, spawnServer } from './util.ts';

export const HELLO_SEA = join(BUILD_DIR, 'bench-hello');

/** Builds the floor when it is missing or older than its inputs. */
export async function helloSea(log: (line: string) => void): Promise<string> {
  const inputs = [join(ROOT, 'scripts', 'bench', 'hello.ts'), join(ROOT, 'scripts', 'build-binary.ts')];
  if (existsSync(HELLO_SEA) && inputs.every((f) => statSync(f).mtimeMs < statSync(HELLO_SEA).mtimeMs)) return HELLO_SEA;
  log('startup: building the hello-world SEA (floor)');
  return buildSea({ entry: inputs[0]!, output: HELLO_SEA, assets: {}, log: () => {} });
}

export type StartupResult = {
  runs: number;
  medianMs: Record<string, number>;
  cpuMedianMs: Record<string, number>;
  samplesMs: Record<string, number[]>;
  /** CPU by the first 200 of each start, in start order (its lower quartile moves least with load). */
  cpuSamplesMs: Record<string, number[]>;
  floorMs: number;
  ratio: number;
};

export async function startupFigures(opts: {
  runDir: string;
  runs: number;
  binaries?: Record<string, string>;
  log: (line: string) => void;
}): Promise<StartupResult> {
  const binaries: Record<string, string> = { isocast: BINARY, ...opts.binaries, floor: await helloSea(opts.log) };
  const dir = join(opts.runDir, 'startup');
  const starters = Object.entries(binaries).map(([name, file]) => {
    const home = join(dir, name);
    mkdirSync(home, { recursive: true });
    const bin = join(home, name === 'floor' ? 'hello' : 'isocast');
    copyFileSync(file, bin);
    const start = async () => {
      const port = await freePort();
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        XDG_CACHE_HOME: join(home, 'cache'),
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: join(home, 'data'),
        PAYMENT_MODE: 'mock',
        FEED: 'sim',
        LOG_LEVEL: 'info',
      };
      const s = await spawnServer(bin, ['serve'], { env, port, cwd: home, logFile: join(home, 'start.log') });
      // CPU by the first 200 moves far less than wall time when other work shares the cores; the
      // scheduler's nanoseconds, every live thread, where /proc's stat moved in 10 ms ticks.
      const cpuMs = cpuNs(s.child.pid!) / 1e6;
      await s.stop();
      return { ms: s.startMs, cpuMs };
    };
    return { name, start };
  });
  for (const s of starters) await s.start();
  const samples: Record<string, number[]> = Object.fromEntries(starters.map((s) => [s.name, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(starters.map((s) => [s.name, []]));
  for (let i = 0; i < opts.runs; i++) {
    // Rotate the order each run so no binary always follows the same one.
    for (let k = 0; k < starters.length; k++) {
      const s = starters[(i + k) % starters.length]!;
      const r = await s.start();
      samples[s.name]!.push(Math.round(r.ms * 10) / 10);
      cpu[s.name]!.push(Math.round(r.cpuMs * 10) / 10);
    }
  }
  const medianMs = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, Math.round(median(v) * 10) / 10]));
  const cpuMedianMs = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Math.round(median(v) * 10) / 10]));
  return {
    runs: opts.runs,
    medianMs,
    cpuMedianMs,
    samplesMs: samples,
    cpuSamplesMs: cpu,
    floorMs: medianMs.floor!,
    ratio: Math.round((medianMs.isocast! / medianMs.floor!) * 100) / 100,
  };
}

/** One line: the binary's start against the floor, wall and CPU, with the load average. */
export function startupSummary(r: StartupResult, load: number[]): string {
  return `start-up (target <= x1.5; load ${load.map((x) => x.toFixed(2)).join(' ')})\n  spawn to first 200 ${r.medianMs.isocast} ms vs hello-world SEA ${r.floorMs} ms = x${r.ratio}; CPU by then ${r.cpuMedianMs.isocast} ms vs ${r.cpuMedianMs.floor} ms`;
}

if (import.meta.main) {
  const input = JSON.parse(process.argv[2] ?? '{}') as { runs?: number; binaries?: Record<string, string> };
  const runDir = join(ROOT, 'bench', 'tmp', `startup-${Date.now()}`);
  const out = await startupFigures({
    runDir,
    runs: input.runs ?? 9,
    binaries: input.binaries,
    log: (l) => process.stderr.write(`${l}\n`),
  });
  process.stdout.write(JSON.stringify(out) + '\n');
  const { rmSync } = await import('node:fs');
  rmSync(runDir, { recursive: true, force: true });
}
