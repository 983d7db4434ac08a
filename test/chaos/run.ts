import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { createDriver, makeWallets, rng, type DriverStats } from './driver.ts';
import { checkInvariants, type Check } from './invariants.ts';
import { startServer, type ServerProcess } from './server.ts';
import { publishBaselines, startUpstreams, CHAOS_CITIES } from './upstreams.ts';

/**
 * A chaos run: one DATA_DIR, a real server process per round, a mixed load, SIGKILL at a random
 * instant, restart, repeat; then a final clean start (which reconciles), every cut-off payment
 * sent again, a clean SIGTERM stop, and the invariant checks.
 */
export type ChaosOptions = {
  rounds: number;
  seed?: number;
  /** Kill instant, uniform in [min, max] ms after the load starts. */
  killAfterMs?: [number, number];
  wallets?: number;
  keepDir?: boolean;
  log?: (line: string) => void;
};

export type ChaosReport = {
  rounds: number;
  seed: number;
  dataDir: string;
  kills: { round: number; afterMs: number; exit: string }[];
  stats: DriverStats;
  checks: Check[];
  elapsedMs: number;
  finalExit: string;
  ok: boolean;
};

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const seed = opts.seed ?? (Date.now() & 0xffff);
  const log = opts.log ?? (() => {});
  const r = rng(seed);
  const dataDir = mkdtempSync(join(tmpdir(), 'isocast-chaos-'));
  const u = await startUpstreams();
  const wallets = makeWallets(seed, opts.wallets ?? 4, CHAOS_CITIES);
  const driver = createDriver(u, wallets);
  const [killMin, killMax] = opts.killAfterMs ?? [300, 2_500];
  const env = {
    PAYMENT_MODE: 'mock', FEED: 'live', WEATHER_SOURCE: 'metar', POLL_INTERVAL_MS: '250',
    GAMMA_URL: u.gamma.url, CLOB_URL: u.clob.url, METAR_URL: u.metar.url,
    MESSENGER_API_URL: u.bot.url, MESSENGER_BOT_TOKEN: u.bot.token, LOG_LEVEL: 'info',
  };
  const kills: ChaosReport['kills'] = [];
  let server: ServerProcess | null = null;
  let finalExit = '';
  try {
    u.ensureEvents(Date.now());
    publishBaselines(u, Date.now());
    for (let round = 1; round <= opts.rounds; round++) {
      u.ensureEvents(Date.now());
      server = await startServer({ dataDir, env });
      const stop = new AbortController();
      const load = driver.run(server.baseUrl, stop.signal, r);
      const afterMs = Math.round(killMin + r() * (killMax - killMin));
      await sleep(afterMs);
      const exit = await server.kill('SIGKILL');
      stop.abort();
      await load;
      kills.push({ round, afterMs, exit });
      log(`round ${String(round).padStart(2)}: killed after ${afterMs} ms (${exit}); ${driver.ledger.length} authorizations, ${driver.ledger.filter((e) => e.outcome === 'pending').length} pending`);
    }

    // Final start: reconciliation runs before it listens; then every cut-off payment is retried.
    server = await startServer({ dataDir, env });
    await driver.resolvePending(server.baseUrl);
    await driver.resolvePending(server.baseUrl);
    await driver.register(server.baseUrl);
    await catchUp(join(dataDir, 'isocast.db'), u.cities, 15_000);
    finalExit = await server.kill('SIGTERM');
    server = null;
    log(`final start: pending resolved, poller caught up, SIGTERM exit ${finalExit}`);

    const checks = checkInvariants({ dbPath: join(dataDir, 'isocast.db'), ledger: driver.ledger, wallets, cities: u.cities, botMessages: u.bot.messages });
    checks.push({ name: 'every restart came up; clean stop exits 0', ok: finalExit === '0', detail: `${opts.rounds + 1} starts, SIGTERM exit ${finalExit}` });
    checks.push({
      name: 'no unhandled 5xx, no bad page, every JSON object has disclaimer', ok: driver.stats.anomalies.length === 0,
      detail: driver.stats.anomalies.length === 0 ? `${driver.stats.requests} requests (${driver.stats.cutOff} cut off by kills)` : driver.stats.anomalies.slice(0, 3).join('; '),
    });
    return { rounds: opts.rounds, seed, dataDir, kills, stats: driver.stats, checks, elapsedMs: Date.now() - started, finalExit, ok: checks.every((c) => c.ok) };
  } finally {
    if (server) await server.kill('SIGKILL');
    await u.close();
    if (!opts.keepDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Waits until every city's stored day high equals the last reading the driver published. */
async function catchUp(dbPath: string, cities: Awaited<ReturnType<typeof startUpstreams>>['cities'], timeoutMs: number): Promise<void> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const high = db.prepare('SELECT max(high) FROM day_state WHERE city = ?').pluck();
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if ([...cities.values()].every((w) => high.get(w.city.slug) === w.reading)) return;
      await sleep(100);
    }
  } finally {
    db.close();
  }
}
