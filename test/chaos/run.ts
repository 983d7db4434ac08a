import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { createDriver, makeWallets, rng, type DriverStats } from './driver.ts';
import { checkInvariants, settlementFigures, signalsByKind, type Check, type SettlementFigures } from './invariants.ts';
import { startFakeChain, type FakeChain } from '../fakes/chain-rpc.ts';
import { startFakeFacilitator, type FacilitatorMode, type FakeFacilitator } from '../fakes/facilitator.ts';
import { startServer, type ServerProcess } from './server.ts';
import { publishBaselines, startUpstreams, CHAOS_STREAMS } from './upstreams.ts';

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
  /**
   * Live facilitator mode over a fake facilitator and a fake chain (JSON-RPC): in a share of
   * /settle calls the facilitator transfers and then goes quiet, resets, answers 502 or
   * success: false, or is slow enough for the kill (SIGKILL or SIGTERM) to land mid-settle.
   */
  settlementFaults?: boolean;
};

/** The settlement-fault mix: the share of /settle calls that behave each way. */
export const SETTLE_FAULTS: [FacilitatorMode, number][] = [
  ['ok', 0.4],
  ['slow-ok', 0.12],
  ['slow-then-transfer', 0.08],
  ['settle-then-reset', 0.1],
  ['settle-then-502', 0.08],
  ['settle-then-fail', 0.08],
  ['no-tx-hash', 0.04],
  ['reset', 0.05],
  ['settle-fails', 0.05],
];

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
  /** Signals stored per kind over the run. */
  signals: { high: number; low: number };
  /** The settlement-fault run's figures. */
  settlement?: SettlementFigures & { settleCalls: Record<string, number> };
};

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const seed = opts.seed ?? Date.now() & 0xffff;
  const log = opts.log ?? (() => {});
  const r = rng(seed);
  const dataDir = mkdtempSync(join(tmpdir(), 'isocast-chaos-'));
  const u = await startUpstreams();
  const wallets = makeWallets(seed, opts.wallets ?? 4, CHAOS_STREAMS);
  const faults = opts.settlementFaults === true;
  // A definite "not charged" is legitimate in both runs (mock: a claim cut off by the kill was
  // never settled); the ledger and, with faults, the chain checks prove each one true.
  const driver = createDriver(u, wallets, { allowNotCharged: true });
  const [killMin, killMax] = opts.killAfterMs ?? [300, 2_500];
  let chain: FakeChain | null = null;
  let fac: FakeFacilitator | null = null;
  const env: Record<string, string> = {
    PAYMENT_MODE: 'mock',
    FEED: 'live',
    WEATHER_SOURCE: 'metar',
    // Both kinds, whatever the default: the invariants are checked for highs and lows alike.
    MARKET_KINDS: 'high,low',
    POLL_INTERVAL_MS: '250',
    GAMMA_URL: u.gamma.url,
    CLOB_URL: u.clob.url,
    METAR_URL: u.metar.url,
    MESSENGER_API_URL: u.bot.url,
    MESSENGER_BOT_TOKEN: u.bot.token,
    LOG_LEVEL: 'info',
    // The driver is a deliberate flood from one address and four wallets: the abuse limits (tested
    // in test/limits) would only turn its purchases into 429s.
    RATE_LIMIT_ADDRESS_PER_MIN: '0',
    RATE_LIMIT_WALLET_PER_MIN: '0',
  };
  if (faults) {
    chain = await startFakeChain();
    fac = await startFakeFacilitator('ok', { chain });
    const fr = rng(seed ^ 0x5e77);
    fac.pickSettle = () => {
      let x = fr();
      for (const [mode, share] of SETTLE_FAULTS) {
        x -= share;
        if (x < 0) return mode;
      }
      return 'ok';
    };
    fac.slowMs = () => 300 + Math.floor(fr() * 2_500);
    Object.assign(env, {
      PAYMENT_MODE: 'live',
      PAY_TO: '0x00000000000000000000000000000000000000aa',
      FACILITATOR_URL: fac.url,
      RPC_URL: chain.url,
      USDC_ADDRESS: chain.usdc,
      OFAC_REQUIRED: 'false',
      RECONCILE_INTERVAL_MS: '1000',
    });
  }
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
      // The settlement-fault run also stops with SIGTERM mid-settle (the shutdown waits for settles).
      const signal = faults && r() < 0.4 ? 'SIGTERM' : 'SIGKILL';
      const exit = await server.kill(signal);
      stop.abort();
      await load;
      kills.push({ round, afterMs, exit });
      log(
        `round ${String(round).padStart(2)}: ${signal} after ${afterMs} ms (${exit}); ${driver.ledger.length} authorizations, ${driver.ledger.filter((e) => e.outcome === 'pending').length} pending`,
      );
    }
    // Settles the faults cut off may still land (slow-then-transfer): give them time to, then
    // let the facilitator behave so every authorization left in doubt and unused can settle.
    if (fac) {
      await sleep(3_000);
      fac.pickSettle = () => 'ok';
    }

    // Final start: reconciliation runs before it listens; then every cut-off payment is retried.
    server = await startServer({ dataDir, env });
    await driver.resolvePending(server.baseUrl);
    await driver.resolvePending(server.baseUrl);
    await driver.register(server.baseUrl);
    await catchUp(join(dataDir, 'isocast.db'), u.cities, 15_000);
    // One more bucket on every stream once the poller holds each day's state: every stream, high
    // and low, then has at least one crossing to check, however little the kills let through.
    for (const slug of u.cities.keys()) u.move(slug, 1, Date.now());
    await catchUp(join(dataDir, 'isocast.db'), u.cities, 30_000);
    finalExit = await server.kill('SIGTERM');
    server = null;
    log(`final start: pending resolved, poller caught up, SIGTERM exit ${finalExit}`);

    const transfers = chain ? new Map([...chain.used].map(([k, v]) => [k, { txHash: v.txHash }])) : undefined;
    const checks = checkInvariants({
      dbPath: join(dataDir, 'isocast.db'),
      ledger: driver.ledger,
      wallets,
      cities: u.cities,
      botMessages: u.bot.messages,
      transfers,
    });
    const stopsOk = kills.every((k) => k.exit === 'SIGKILL' || k.exit === '0');
    checks.push({
      name: 'every restart came up; clean stop exits 0',
      ok: finalExit === '0' && stopsOk,
      detail: `${opts.rounds + 1} starts, ${kills.filter((k) => k.exit === '0').length} SIGTERM stops mid-load exited 0, final SIGTERM exit ${finalExit}`,
    });
    const settlement =
      transfers && fac
        ? {
            ...settlementFigures(join(dataDir, 'isocast.db'), transfers, driver.ledger),
            settleCalls: Object.fromEntries(fac.settleOutcomes),
          }
        : undefined;
    checks.push({
      name: 'no unhandled 5xx, no bad page, every JSON object has disclaimer',
      ok: driver.stats.anomalies.length === 0,
      detail:
        driver.stats.anomalies.length === 0
          ? `${driver.stats.requests} requests (${driver.stats.cutOff} cut off by kills)`
          : driver.stats.anomalies.slice(0, 3).join('; '),
    });
    return {
      rounds: opts.rounds,
      seed,
      dataDir,
      kills,
      stats: driver.stats,
      checks,
      elapsedMs: Date.now() - started,
      finalExit,
      ok: checks.every((c) => c.ok),
      signals: signalsByKind(join(dataDir, 'isocast.db')),
      settlement,
    };
  } finally {
    if (server) await server.kill('SIGKILL');
    await u.close();
    await fac?.close();
    await chain?.close();
    if (!opts.keepDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Waits until every stream's stored day extreme equals the last reading the driver published (a
 * high's running maximum, a low's running minimum: `day_state.high` holds either).
 */
async function catchUp(
  dbPath: string,
  cities: Awaited<ReturnType<typeof startUpstreams>>['cities'],
  timeoutMs: number,
): Promise<void> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const high = db.prepare('SELECT max(high) FROM day_state WHERE city = ?').pluck();
    const low = db.prepare('SELECT min(high) FROM day_state WHERE city = ?').pluck();
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if ([...cities.values()].every((w) => (w.kind === 'high' ? high : low).get(w.city.slug) === w.reading)) return;
      await sleep(100);
    }
  } finally {
    db.close();
  }
}
