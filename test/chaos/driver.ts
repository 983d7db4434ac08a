import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { keccak256, toHex, type Hex } from 'viem';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { deliveryTypedData } from '../../src/delivery/typed-data.ts';
import type { Upstreams } from './upstreams.ts';

/**
 * The mixed load a chaos round puts on the server, and the driver's own ledger of every distinct
 * authorization it signed and what the server answered for it. Requests cut off by the kill leave
 * an entry `pending`; the next round sends the same authorization again until it is answered.
 */
export type Rng = () => number;

/** mulberry32: small, seeded, good enough to pick actions reproducibly. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

export type LedgerEntry = {
  payer: string;
  nonce: Hex;
  city: string;
  count: number;
  via: 'subscribe' | 'signals';
  xPayment: string;
  copiesSent: number;
  /** pending also while the server answers 503 settlement pending (in doubt): it is sent again. */
  outcome: 'pending' | 'ok' | 'refund' | 'rejected' | 'not-charged' | 'unbought';
  /** The server said "you were not charged" for this authorization at least once. */
  toldNotCharged?: boolean;
  /** 503 settlement pending answers received. */
  inDoubtAnswers?: number;
  /** 200 answers saying the purchase was applied now (`idempotent: false`); at most one may exist. */
  freshApplications: number;
  rejection?: string;
};

export type DriverStats = {
  requests: number;
  cutOff: number;
  payments: number;
  /** Purchases whose nonce repeated an earlier one (same payer, city, count, salt window). */
  sameNonceRebuys: number;
  duplicateCopies: number;
  reads: number;
  /** Temperature moves published: a high stream's reading up, a low stream's down. */
  moves: number;
  registrations: number;
  anomalies: string[];
};

export type Wallet = {
  account: PrivateKeyAccount;
  chatId: string;
  citySlug: string;
  registered: boolean;
  receipt: string | null;
};

export function makeWallets(seed: number, n: number, cities: readonly string[]): Wallet[] {
  return Array.from({ length: n }, (_, i) => ({
    account: privateKeyToAccount(keccak256(toHex(`isocast-chaos-${seed}-${i}`))),
    chatId: String(7001 + i),
    // The first wallet takes every city, the others one city each.
    citySlug: i === 0 ? '' : cities[i % cities.length]!,
    registered: false,
    receipt: null,
  }));
}

export type Driver = {
  ledger: LedgerEntry[];
  stats: DriverStats;
  wallets: Wallet[];
  /** Runs the load against `baseUrl` until `stop` aborts; resolves when every task has wound down. */
  run(baseUrl: string, stop: AbortSignal, r: Rng): Promise<void>;
  /** Sends every pending authorization again (after a restart), sequentially. */
  resolvePending(baseUrl: string, stop?: AbortSignal): Promise<void>;
  register(baseUrl: string, stop?: AbortSignal): Promise<void>;
};

/** allowNotCharged: a definite "not charged" is a legitimate answer (checked afterwards, not here). */
export function createDriver(u: Upstreams, wallets: Wallet[], opts: { allowNotCharged?: boolean } = {}): Driver {
  const allowNotCharged = opts.allowNotCharged === true;
  const ledger: LedgerEntry[] = [];
  const byKey = new Map<string, LedgerEntry>();
  const stats: DriverStats = {
    requests: 0,
    cutOff: 0,
    payments: 0,
    sameNonceRebuys: 0,
    duplicateCopies: 0,
    reads: 0,
    moves: 0,
    registrations: 0,
    anomalies: [],
  };
  const cities = [...u.cities.keys()];
  const anomaly = (s: string) => {
    if (stats.anomalies.length < 50) stats.anomalies.push(s);
  };

  /** One HTTP exchange; null when the connection was cut (the kill) or the run was stopped. */
  async function call(
    url: string,
    init: RequestInit,
    stop?: AbortSignal,
  ): Promise<{ status: number; body: any; headers: Headers } | null> {
    stats.requests++;
    try {
      const signal = stop ? AbortSignal.any([stop, AbortSignal.timeout(15_000)]) : AbortSignal.timeout(15_000);
      const res = await fetch(url, { ...init, signal });
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      const expected503 =
        res.status === 503 &&
        typeof body?.error === 'string' &&
        (body.error.startsWith('settlement pending') || body.error.startsWith('server shutting down'));
      if (res.status >= 500 && !(res.status === 502 && body?.refund === 'queued') && !expected503)
        anomaly(`${init.method ?? 'GET'} ${new URL(url).pathname} answered ${res.status}: ${text.slice(0, 160)}`);
      if (body && typeof body === 'object' && !Array.isArray(body) && typeof body.disclaimer !== 'string')
        anomaly(`${new URL(url).pathname} JSON object without disclaimer`);
      return { status: res.status, body, headers: res.headers };
    } catch {
      stats.cutOff++;
      return null;
    }
  }

  const wallet = (payer: string) => wallets.find((w) => w.account.address.toLowerCase() === payer.toLowerCase())!;

  /** Sends one copy of an authorization and folds the answer into its ledger entry. */
  async function send(base: string, e: LedgerEntry, stop?: AbortSignal): Promise<void> {
    e.copiesSent++;
    const path =
      e.via === 'subscribe'
        ? `/v1/subscribe?city=${e.city}&count=${e.count}`
        : `/v1/signals?city=${e.city}&count=${e.count}`;
    const res = await call(
      base + path,
      { method: e.via === 'subscribe' ? 'POST' : 'GET', headers: { 'x-payment': e.xPayment } },
      stop,
    );
    if (!res) return;
    if (typeof res.body?.error === 'string' && res.body.error.includes('not charged')) e.toldNotCharged = true;
    if (res.status === 503) {
      // In doubt, or the server is stopping: the same header is sent again later.
      if (String(res.body?.error).startsWith('settlement pending')) e.inDoubtAnswers = (e.inDoubtAnswers ?? 0) + 1;
      return;
    }
    if (res.status === 200) {
      e.outcome = 'ok';
      if (e.via === 'subscribe') {
        if (res.body.idempotent === false) e.freshApplications++;
        if (res.body.receiptToken) wallet(e.payer).receipt = res.body.receiptToken;
      } else {
        const token = res.headers.get('x-receipt-token');
        if (token) wallet(e.payer).receipt = token;
        checkPage(res.body, 0, `inline read ${e.city}`);
      }
    } else if (res.status === 502 && res.body?.refund === 'queued') {
      e.outcome = 'refund';
    } else if (res.status === 402 && e.via === 'signals' && res.body?.idempotent === true) {
      // Already applied (a resend after a doubt, or a copy): it stands, but reads nothing (issue 23).
      e.outcome = 'ok';
    } else if (res.status === 402 && e.via === 'signals' && res.body?.paid_through !== undefined) {
      // The purchase would buy nothing readable past `since`: refused before anything settled.
      if (e.outcome === 'pending') e.outcome = 'unbought';
    } else if (
      allowNotCharged &&
      res.status === 402 &&
      res.body?.error === 'settlement failed — you were not charged'
    ) {
      // A definite settlement failure (the settlement-fault run injects some): the final check
      // proves no transfer exists for it.
      if (e.outcome === 'pending') e.outcome = 'not-charged';
    } else if (e.outcome === 'pending') {
      e.outcome = 'rejected';
      e.rejection = `${res.status} ${res.body?.error ?? ''} ${res.body?.reason ?? ''}`.trim();
      anomaly(`valid payment refused: ${e.rejection}`);
    }
  }

  function checkPage(body: any, since: number, what: string): void {
    if (!body || !Array.isArray(body.signals)) {
      anomaly(`${what}: no signals array`);
      return;
    }
    let prev = since;
    for (const s of body.signals) {
      if (s.seq <= prev) anomaly(`${what}: seq ${s.seq} out of order after ${prev}`);
      if (s.seq > body.paid_through) anomaly(`${what}: seq ${s.seq} above paid_through ${body.paid_through}`);
      prev = s.seq;
    }
    if (body.signals.length > 100) anomaly(`${what}: page of ${body.signals.length}`);
  }

  async function payOnce(base: string, r: Rng, stop: AbortSignal): Promise<void> {
    const w = pick(r, wallets);
    const city = pick(r, cities);
    // Counts spread wide so most purchases are distinct authorizations, with some repeats.
    const count = r() < 0.2 ? pick(r, [2, 20]) : 2 + Math.floor(r() * 400);
    const via = r() < 0.25 ? 'signals' : 'subscribe';
    const ask =
      via === 'subscribe'
        ? await call(`${base}/v1/subscribe?city=${city}&count=${count}`, { method: 'POST' }, stop)
        : await call(`${base}/v1/signals?city=${city}&count=${count}`, {}, stop);
    if (ask?.status !== 402) return;
    // The settlement-fault runs use a fake chain with its own USDC deployment: named explicitly,
    // as a buyer would, so the client's asset check still runs.
    const p = await payFor402(ask.body, w.account, { expect: { city, count, usdc: ask.body?.accepts?.[0]?.asset } });
    // Same payer, city and count bound to one served salt (two 402s read before either purchase
    // settled, or a refusal within the minute) give the same nonce: one authorization as far as
    // the chain (and the server) is concerned, so one ledger entry.
    const key = `${p.payer.toLowerCase()}|${p.nonce}`;
    let e = byKey.get(key);
    if (e) {
      stats.sameNonceRebuys++;
      e.xPayment = p.xPayment;
    } else {
      e = {
        payer: p.payer.toLowerCase(),
        nonce: p.nonce,
        city,
        count,
        via,
        xPayment: p.xPayment,
        copiesSent: 0,
        outcome: 'pending',
        freshApplications: 0,
      };
      ledger.push(e);
      byKey.set(key, e);
      stats.payments++;
    }
    const entry = e;
    const mode = r();
    if (mode < 0.35) {
      const copies = 2 + Math.floor(r() * 3);
      stats.duplicateCopies += copies - 1;
      await Promise.all(Array.from({ length: copies }, () => send(base, entry, stop)));
    } else if (mode < 0.6) {
      await send(base, entry, stop);
      stats.duplicateCopies++;
      await send(base, entry, stop);
    } else {
      await send(base, entry, stop);
    }
  }

  async function readOnce(base: string, r: Rng, stop: AbortSignal): Promise<void> {
    const w = pick(
      r,
      wallets.filter((x) => x.receipt),
    );
    if (!w?.receipt) return;
    const city = pick(r, cities);
    const since = Math.floor(r() * 4);
    const res = await call(
      `${base}/v1/signals?city=${city}&since=${since}`,
      { headers: { authorization: `Bearer ${w.receipt}` } },
      stop,
    );
    stats.reads++;
    if (res?.status === 200) checkPage(res.body, since, `read ${city} since ${since}`);
    else if (res && res.status !== 402) anomaly(`receipt read answered ${res.status}`);
  }

  async function register(base: string, stop?: AbortSignal): Promise<void> {
    for (const w of wallets.filter((x) => !x.registered)) {
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = await w.account.signTypedData(
        deliveryTypedData({
          wallet: w.account.address,
          chatId: w.chatId,
          citySlug: w.citySlug,
          action: 'set',
          timestamp,
        }),
      );
      const res = await call(
        `${base}/v1/delivery/messenger`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            wallet: w.account.address,
            chatId: w.chatId,
            citySlug: w.citySlug,
            action: 'set',
            signature,
            timestamp,
          }),
        },
        stop,
      );
      if (res?.status === 200) {
        w.registered = true;
        stats.registrations++;
      } else if (res) anomaly(`registration answered ${res.status}`);
    }
  }

  const loop = async (stop: AbortSignal, pauseMs: () => number, step: () => Promise<void>) => {
    while (!stop.aborted) {
      try {
        await step();
      } catch (err) {
        if (!stop.aborted) anomaly(`driver step failed: ${(err as Error).message}`);
      }
      if (stop.aborted) break;
      await new Promise((resolve) => {
        const t = setTimeout(resolve, pauseMs());
        stop.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            resolve(null);
          },
          { once: true },
        );
      });
    }
  };

  async function resolvePending(base: string, stop?: AbortSignal): Promise<void> {
    for (const e of ledger.filter((x) => x.outcome === 'pending')) {
      if (stop?.aborted) return;
      await send(base, e, stop);
    }
  }

  return {
    ledger,
    stats,
    wallets,
    register,
    resolvePending,
    async run(base, stop, r) {
      await Promise.all([
        (async () => {
          await resolvePending(base, stop);
          await register(base, stop);
        })(),
        loop(
          stop,
          () => 20 + r() * 60,
          () => payOnce(base, r, stop),
        ),
        loop(
          stop,
          () => 20 + r() * 60,
          () => payOnce(base, r, stop),
        ),
        loop(
          stop,
          () => 30 + r() * 50,
          () => readOnce(base, r, stop),
        ),
        loop(
          stop,
          () => 150 + r() * 250,
          async () => {
            u.move(pick(r, cities), 1 + Math.floor(r() * 2), Date.now());
            stats.moves++;
          },
        ),
      ]);
    },
  };
}
