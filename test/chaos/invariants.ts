import Database from 'better-sqlite3';
import type { Address, Hex } from 'viem';
import { CITY_ROWS, LOW_SUFFIX } from '../../src/cities/catalog.ts';
import { bucketFor, isDead } from '../../src/buckets/labels.ts';
import { mockTxHash } from '../../src/payments/settlers/mock.ts';
import type { BotMessage } from '../fakes/bot-api.ts';
import type { LedgerEntry, Wallet } from './driver.ts';
import type { CityWorld } from './upstreams.ts';

/**
 * The checks after a chaos run, read from the database file (server stopped), the driver's ledger
 * and what the fake Bot API received. Each check is one row of the final table.
 */
export type Check = { name: string; ok: boolean; detail: string };

type PaymentRow = {
  id: number;
  payer: string;
  nonce: string;
  city: string;
  count: number;
  status: string;
  tx_hash: string | null;
};

export function checkInvariants(input: {
  dbPath: string;
  ledger: LedgerEntry[];
  wallets: Wallet[];
  cities: Map<string, CityWorld>;
  botMessages: BotMessage[];
  /** The settlement-fault run: every transfer on its fake chain, by `${payer}:${nonce}`. */
  transfers?: Map<string, { txHash: string }>;
}): Check[] {
  const db = new Database(input.dbPath, { readonly: true });
  try {
    return run(db, input);
  } finally {
    db.close();
  }
}

function run(db: Database.Database, input: Parameters<typeof checkInvariants>[0]): Check[] {
  const checks: Check[] = [];
  const add = (name: string, problems: string[], okDetail: string) =>
    checks.push({
      name,
      ok: problems.length === 0,
      detail: problems.length === 0 ? okDetail : `${problems.length} problem(s): ${problems.slice(0, 3).join('; ')}`,
    });

  const integrity = db.pragma('integrity_check', { simple: true });
  const fk = db.pragma('foreign_key_check') as unknown[];
  add(
    'PRAGMA integrity_check',
    [...(integrity === 'ok' ? [] : [String(integrity)]), ...(fk.length ? [`${fk.length} foreign key violations`] : [])],
    'ok; foreign_key_check clean',
  );

  // Payments: every settlement applied once or refunded; nothing left half-way after reconciliation.
  const payments = db
    .prepare('SELECT id, payer, nonce, city, count, status, tx_hash FROM payments')
    .all() as PaymentRow[];
  const refunds = new Set(db.prepare('SELECT payment_id FROM refunds').pluck().all() as number[]);
  const p1: string[] = [];
  for (const p of payments) {
    if (p.tx_hash !== null && p.status !== 'applied' && !(p.status === 'refund_queued' && refunds.has(p.id)))
      p1.push(`payment ${p.id} settled but ${p.status}`);
    if (p.status === 'claimed' || p.status === 'settled') p1.push(`payment ${p.id} left ${p.status}`);
    if (p.status === 'failed' && p.tx_hash !== null) p1.push(`payment ${p.id} failed with a tx hash`);
    const real = input.transfers
      ? (input.transfers.get(`${p.payer}:${p.nonce}`)?.txHash ?? null)
      : mockTxHash(p.payer as Address, p.nonce as Hex).toLowerCase();
    if (p.tx_hash !== null && p.tx_hash !== real) p1.push(`payment ${p.id} has a foreign tx hash`);
  }
  const applied = payments.filter((p) => p.status === 'applied');
  add(
    'settled payment -> applied once or refund queued',
    p1,
    `${payments.length} payment rows: ${applied.length} applied, ${payments.filter((p) => p.status === 'refund_queued').length} refund queued, ${payments.filter((p) => p.status === 'failed').length} failed (not charged)`,
  );

  if (input.transfers) checks.push(...settlementChecks(payments, refunds, input.transfers, input.ledger));

  // Driver ledger against the table.
  const byKey = new Map(payments.map((p) => [`${p.payer}|${p.nonce}`, p]));
  const sent = new Set(input.ledger.map((e) => `${e.payer}|${e.nonce}`));
  const p2: string[] = [];
  for (const e of input.ledger) {
    const row = byKey.get(`${e.payer}|${e.nonce}`);
    if (e.outcome === 'ok' && row?.status !== 'applied')
      p2.push(`authorization answered 200 but payment is ${row?.status ?? 'missing'}`);
    if (e.outcome === 'pending')
      p2.push(`authorization ${e.nonce.slice(0, 10)} never answered after the final restart`);
    if (e.outcome === 'rejected') p2.push(`authorization refused: ${e.rejection}`);
    if ((e.outcome === 'not-charged' || e.outcome === 'unbought') && row && row.status !== 'failed')
      p2.push(`authorization told ${e.outcome} but payment is ${row.status}`);
    if (e.freshApplications > 1)
      p2.push(`authorization ${e.nonce.slice(0, 10)} applied fresh ${e.freshApplications} times`);
    if (row && (row.city !== e.city || row.count !== e.count))
      p2.push(`payment ${row.id} city/count differ from what was signed`);
  }
  for (const p of payments)
    if (!sent.has(`${p.payer}|${p.nonce}`)) p2.push(`payment ${p.id} matches no authorization the driver signed`);
  const copies = input.ledger.reduce((n, e) => n + e.copiesSent, 0);
  add(
    'driver ledger == payments table (no lost, no phantom, no double)',
    p2,
    `${input.ledger.length} distinct authorizations (${copies} copies sent) -> ${input.ledger.filter((e) => e.outcome === 'ok').length} answered 200, each one applied payment`,
  );

  // Entitlement totals.
  const ents = db
    .prepare('SELECT wallet, city, paid_through_seq AS pts, total_paid_signals AS total FROM entitlements')
    .all() as { wallet: string; city: string; pts: number; total: number }[];
  const latest = new Map(
    (db.prepare('SELECT city, max(seq) AS n FROM signals GROUP BY city').all() as { city: string; n: number }[]).map(
      (r) => [r.city, r.n],
    ),
  );
  const sums = new Map<string, number>();
  for (const p of applied) sums.set(`${p.payer}|${p.city}`, (sums.get(`${p.payer}|${p.city}`) ?? 0) + p.count);
  const p3: string[] = [];
  for (const e of ents) {
    const want = sums.get(`${e.wallet}|${e.city}`) ?? 0;
    if (e.total !== want)
      p3.push(`${e.wallet.slice(0, 8)}/${e.city}: totalPaidSignals ${e.total} != applied counts ${want}`);
    if (e.pts < e.total) p3.push(`${e.wallet.slice(0, 8)}/${e.city}: paidThroughSeq ${e.pts} < total ${e.total}`);
    if (e.pts > (latest.get(e.city) ?? 0) + e.total)
      p3.push(`${e.wallet.slice(0, 8)}/${e.city}: paidThroughSeq ${e.pts} > latest + total`);
    sums.delete(`${e.wallet}|${e.city}`);
  }
  for (const k of sums.keys()) p3.push(`applied payments for ${k} without an entitlement`);
  add(
    'sum totalPaidSignals == sum of applied counts',
    p3,
    `${ents.length} entitlements, ${ents.reduce((n, e) => n + e.total, 0)} signals paid for`,
  );

  // Signals: gapless unique seq, one per (city, day, bucket), every crossing real.
  const rows = db
    .prepare('SELECT city, seq, target_date AS date, new_bucket AS bucket, payload FROM signals ORDER BY city, seq')
    .all() as { city: string; seq: number; date: string; bucket: string; payload: string }[];
  const p4: string[] = [];
  const perCity = new Map<string, number[]>();
  for (const r of rows) perCity.set(r.city, [...(perCity.get(r.city) ?? []), r.seq]);
  for (const [city, seqs] of perCity)
    seqs.forEach((s, i) => {
      if (s !== i + 1) p4.push(`${city}: seq ${s} at position ${i + 1}`);
    });
  add(
    'per-stream seq gapless from 1, unique',
    p4,
    [...perCity].map(([c, s]) => `${c} 1..${s.length}`).join(', ') || 'no signals',
  );

  const p5: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    const k = `${r.city}|${r.date}|${r.bucket}`;
    if (seen.has(k)) p5.push(`two signals for ${k}`);
    seen.add(k);
  }
  const lastByDay = new Map<string, { reading: number; bucket: string | null }>();
  let deadFlags = 0;
  for (const r of rows) {
    const s = JSON.parse(r.payload) as {
      new: { reading: number; bucket: string };
      old: { reading: number; bucket: string | null };
      buckets: { label: string; dead?: true }[] | null;
    };
    const w = input.cities.get(r.city);
    // A stream the world does not know is taken by its slug: `-low` streams only fall.
    const kind = w?.kind ?? (r.city.endsWith(LOW_SUFFIX) ? 'low' : 'high');
    const prev = lastByDay.get(`${r.city}|${r.date}`);
    if (prev && (s.old.bucket !== prev.bucket || s.old.reading !== prev.reading))
      p5.push(`${r.city} #${r.seq}: old ${s.old.bucket} does not continue from ${prev.bucket}`);
    if (prev && (kind === 'high' ? s.new.reading <= prev.reading : s.new.reading >= prev.reading))
      p5.push(`${r.city} #${r.seq}: reading did not ${kind === 'high' ? 'rise' : 'fall'}`);
    if (
      !prev &&
      s.old.reading !== undefined &&
      (kind === 'high' ? s.new.reading <= s.old.reading : s.new.reading >= s.old.reading)
    )
      p5.push(`${r.city} #${r.seq}: reading did not ${kind === 'high' ? 'rise' : 'fall'} from the baseline`);
    if (w && !w.published.get(r.date)?.has(s.new.reading))
      p5.push(`${r.city} #${r.seq}: reading ${s.new.reading} was never published`);
    if (w && bucketFor(s.new.reading, w.ranges)?.label !== s.new.bucket)
      p5.push(`${r.city} #${r.seq}: ${s.new.reading} is not in ${s.new.bucket}`);
    // Dead means "can no longer win" for the stream's direction: wholly below a high, wholly above a low.
    for (const b of (w && s.buckets) || []) {
      const range = w!.ranges.find((x) => x.label === b.label);
      if (!range) {
        p5.push(`${r.city} #${r.seq}: bucket ${b.label} is not on the ladder`);
        continue;
      }
      if (b.dead) deadFlags++;
      if ((b.dead === true) !== isDead(range, s.new.reading, kind))
        p5.push(`${r.city} #${r.seq}: ${b.label} dead=${b.dead === true} at a ${kind} of ${s.new.reading}`);
    }
    lastByDay.set(`${r.city}|${r.date}`, { reading: s.new.reading, bucket: s.new.bucket });
  }
  const byKind = { high: 0, low: 0 };
  for (const r of rows) byKind[r.city.endsWith(LOW_SUFFIX) ? 'low' : 'high']++;
  add(
    'one signal per (stream, day, bucket); every crossing real, in its direction; dead buckets match it',
    p5,
    `${rows.length} signals (${byKind.high} high, ${byKind.low} low), each a published reading entering a new bucket; ${deadFlags} dead flags, each wholly below a high or above a low`,
  );

  // Delivery: no (chat, signal) twice, nothing pushed beyond the entitlement.
  // Messages name the stream by display name: "New York City" is nyc, "New York City (low)" nyc-low.
  const byName = new Map([
    ...CITY_ROWS.map((c) => [c.displayName, c.slug] as const),
    ...[...input.cities.values()].map((w) => [w.city.displayName, w.city.slug] as const),
  ]);
  const pts = new Map(ents.map((e) => [`${e.wallet}|${e.city}`, e.pts]));
  const walletOfChat = new Map(input.wallets.map((w) => [w.chatId, w.account.address.toLowerCase()]));
  const p6: string[] = [];
  const pushed = new Set<string>();
  let signalMessages = 0;
  for (const m of input.botMessages) {
    const head = /^isocast signal #(\d+): (.+?), market day (\d{4}-\d{2}-\d{2})/.exec(m.text);
    if (!head) continue;
    signalMessages++;
    const city = byName.get(head[2]!) ?? '?';
    const seq = Number(head[1]);
    const k = `${m.chatId}|${city}|${seq}`;
    if (pushed.has(k)) p6.push(`chat ${m.chatId} got ${city} #${seq} twice`);
    pushed.add(k);
    if (seq > (latest.get(city) ?? 0)) p6.push(`chat ${m.chatId} got ${city} #${seq}, which is not stored`);
    const wallet = walletOfChat.get(m.chatId);
    if (!wallet || seq > (pts.get(`${wallet}|${city}`) ?? 0))
      p6.push(`chat ${m.chatId} got ${city} #${seq} beyond its entitlement`);
  }
  const outbox = Object.fromEntries(
    (
      db.prepare('SELECT status, count(*) AS n FROM delivery_outbox GROUP BY status').all() as {
        status: string;
        n: number;
      }[]
    ).map((r) => [r.status, r.n]),
  );
  if ((outbox.sent ?? 0) > signalMessages)
    p6.push(`${outbox.sent} outbox rows sent but ${signalMessages} messages received`);
  add(
    'no chat message twice; none beyond entitlement',
    p6,
    `${signalMessages} signal messages to ${new Set(input.botMessages.map((m) => m.chatId)).size} chats; outbox ${JSON.stringify(outbox)}`,
  );

  return checks;
}

/** Signals stored per kind (a `-low` slug is a daily-low stream), for the report. */
export function signalsByKind(dbPath: string): { high: number; low: number } {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db.prepare('SELECT city, count(*) AS n FROM signals GROUP BY city').all() as {
      city: string;
      n: number;
    }[];
    const out = { high: 0, low: 0 };
    for (const r of rows) out[r.city.endsWith(LOW_SUFFIX) ? 'low' : 'high'] += r.n;
    return out;
  } finally {
    db.close();
  }
}

/** Figures of the settlement-fault run, for the report. */
export type SettlementFigures = {
  transfers: number;
  applied: number;
  refunded: number;
  inDoubtLeft: number;
  failed: number;
  falseNotCharged: number;
  inDoubtAnswers: number;
};

export function settlementFigures(
  dbPath: string,
  transfers: Map<string, { txHash: string }>,
  ledger: LedgerEntry[],
): SettlementFigures {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db.prepare('SELECT payer, nonce, status FROM payments').all() as {
      payer: string;
      nonce: string;
      status: string;
    }[];
    const onChain = (r: { payer: string; nonce: string }) => transfers.has(`${r.payer}:${r.nonce}`);
    return {
      transfers: transfers.size,
      applied: rows.filter((r) => r.status === 'applied' && onChain(r)).length,
      refunded: rows.filter((r) => r.status === 'refund_queued' && onChain(r)).length,
      inDoubtLeft: rows.filter((r) => r.status === 'in_doubt').length,
      failed: rows.filter((r) => r.status === 'failed').length,
      falseNotCharged: ledger.filter((e) => e.toldNotCharged && transfers.has(`${e.payer}:${e.nonce}`)).length,
      inDoubtAnswers: ledger.reduce((n, e) => n + (e.inDoubtAnswers ?? 0), 0),
    };
  } finally {
    db.close();
  }
}

/**
 * Issue 12's money invariants against the fake chain: every transfer applied exactly once or
 * refunded; nothing `failed` while its transfer exists; nobody told "not charged" for a transfer
 * that exists; nothing in doubt whose transfer the reconciler could have found.
 */
function settlementChecks(
  payments: PaymentRow[],
  refunds: Set<number>,
  transfers: Map<string, { txHash: string }>,
  ledger: LedgerEntry[],
): Check[] {
  const byKey = new Map(payments.map((p) => [`${p.payer}:${p.nonce}`, p]));
  const a: string[] = [];
  for (const [key, t] of transfers) {
    const row = byKey.get(key);
    if (!row) a.push(`transfer ${t.txHash.slice(0, 10)} has no payment`);
    else if (!(row.status === 'applied' || (row.status === 'refund_queued' && refunds.has(row.id))))
      a.push(`transfer ${t.txHash.slice(0, 10)}: payment ${row.id} is ${row.status}`);
  }
  const b = payments
    .filter((p) => p.status === 'failed' && transfers.has(`${p.payer}:${p.nonce}`))
    .map((p) => `payment ${p.id} failed but its transfer exists`);
  const c = ledger
    .filter((e) => e.toldNotCharged && transfers.has(`${e.payer}:${e.nonce}`))
    .map((e) => `${e.payer.slice(0, 8)} told "not charged" for ${e.nonce.slice(0, 10)}, which moved money`);
  const d = payments
    .filter((p) => p.status === 'in_doubt' && transfers.has(`${p.payer}:${p.nonce}`))
    .map((p) => `payment ${p.id} still in doubt though its transfer exists`);
  const inDoubt = payments.filter((p) => p.status === 'in_doubt').length;
  const told = ledger.filter((e) => e.toldNotCharged).length;
  return [
    {
      name: 'every transfer on chain applied exactly once or refunded',
      ok: a.length === 0,
      detail: a.length
        ? `${a.length} problem(s): ${a.slice(0, 3).join('; ')}`
        : `${transfers.size} transfers, each one applied (or refunded) payment`,
    },
    {
      name: 'no payment failed while its transfer exists',
      ok: b.length === 0,
      detail: b.length
        ? b.slice(0, 3).join('; ')
        : `${payments.filter((p) => p.status === 'failed').length} failed, none with a transfer`,
    },
    {
      name: 'no buyer told "not charged" for a transfer that exists',
      ok: c.length === 0,
      detail: c.length ? c.slice(0, 3).join('; ') : `${told} "not charged" answers, all true`,
    },
    {
      name: 'nothing left in doubt that the chain can resolve',
      ok: d.length === 0,
      detail: d.length ? d.slice(0, 3).join('; ') : `${inDoubt} in doubt left (unused on chain, still valid)`,
    },
  ];
}

export function formatTable(checks: Check[]): string {
  const w = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map((c) => `${c.ok ? 'PASS' : 'FAIL'}  ${c.name.padEnd(w)}  ${c.detail}`);
  return lines.join('\n');
}
