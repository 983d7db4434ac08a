/**
 * Measures the single binary: file size, time from spawn to the first HTTP 200 on /health
 * (median of RUNS starts), the CPU time spent by then, and resident memory once idle. The binary is copied alone into a
 * temp directory and started the way an operator would, on 127.0.0.1 only.
 *
 * Usage: node scripts/measure-binary.ts [--json] [--no-source]
 *   --no-source  skip the comparison with `node src/main.ts` from the checkout
 * Builds build/isocast first when it is missing or older than its inputs.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BINARY, ROOT, binaryIsStale, buildBinary } from './build-binary.ts';
import { freePort, median, rssMiB, statusOf } from './bench/util.ts';

const RUNS = 7;
const IDLE_MS = 2_000;
const START_TIMEOUT_MS = 30_000;

type Run = { startMs: number; cpuMs: number; rssMiB: number };

/**
 * CPU time (user + system) the process has used so far. Unlike wall time it barely moves when
 * other work competes for the cores, so it is the figure to compare across busy machines.
 * /proc counts in clock ticks (100 per second on Linux), hence 10 ms resolution.
 */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One start: spawn, poll /health every 2 ms until 200, wait idle, read RSS, SIGTERM. */
async function once(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  const port = await freePort();
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, args, {
    cwd,
    env: { ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before answering: ${stderr}`);
      if ((await statusOf(`http://127.0.0.1:${port}/health`)) === 200) break;
      if (Number(process.hrtime.bigint() - t0) / 1e6 > START_TIMEOUT_MS)
        throw new Error('no 200 from /health within 30 s');
      await sleep(2);
    }
    const startMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const cpu = cpuMs(child.pid ?? 0);
    await sleep(IDLE_MS);
    const rss = rssMiB(child.pid ?? 0);
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) throw new Error(`exit code ${code} after SIGTERM: ${stderr}`);
    return { startMs, cpuMs: cpu, rssMiB: rss };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

async function series(label: string, cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  // The first start extracts the addon and creates the database; reported apart, not in the median.
  const first = await once(cmd, args, cwd, env);
  const runs: Run[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await once(cmd, args, cwd, env));
  const starts = runs.map((r) => r.startMs);
  return {
    label,
    firstStartMs: round(first.startMs),
    medianStartMs: round(median(starts)),
    minStartMs: round(Math.min(...starts)),
    maxStartMs: round(Math.max(...starts)),
    medianCpuMsToFirst200: round(median(runs.map((r) => r.cpuMs))),
    medianRssIdleMiB: round(median(runs.map((r) => r.rssMiB))),
  };
}

const round = (x: number) => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const withSource = !process.argv.includes('--no-source');
  const log = (l: string) => {
    if (!json) process.stdout.write(`${l}\n`);
  };
  if (binaryIsStale()) await buildBinary(log);

  const dir = mkdtempSync(join(tmpdir(), 'isocast-measure-'));
  try {
    const bin = join(dir, 'isocast');
    copyFileSync(BINARY, bin);
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      XDG_CACHE_HOME: join(dir, 'cache'),
      LOG_LEVEL: 'warn',
    };
    const results = [await series('binary', bin, ['serve'], dir, { ...env, DATA_DIR: join(dir, 'data-bin') })];
    if (withSource) {
      results.push(
        await series('source (node src/main.ts)', process.execPath, [join(ROOT, 'src', 'main.ts'), 'serve'], dir, {
          ...env,
          DATA_DIR: join(dir, 'data-src'),
        }),
      );
    }
    const sizeMiB = round(statSync(BINARY).size / 1024 / 1024);
    if (json) {
      process.stdout.write(
        `${JSON.stringify({ sizeMiB, runs: RUNS, idleMs: IDLE_MS, loadAverage: loadavg(), results }, null, 2)}\n`,
      );
      return;
    }
    log(
      `load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')} on ${availableParallelism()} cores`,
    );
    log(`binary size: ${sizeMiB} MiB (${BINARY})`);
    for (const r of results) {
      log(
        `${r.label}: spawn to first /health 200 median ${r.medianStartMs} ms over ${RUNS} runs (min ${r.minStartMs}, max ${r.maxStartMs}; first cold start ${r.firstStartMs} ms); CPU used by then median ${r.medianCpuMsToFirst200} ms; RSS idle after ${IDLE_MS / 1000} s median ${r.medianRssIdleMiB} MiB`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`measure-binary: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
