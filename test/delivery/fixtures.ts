import type { PrivateKeyAccount } from 'viem/accounts';
import type { Db } from '../../src/db/open.ts';
import { deliveryTypedData } from '../../src/delivery/typed-data.ts';
import type { Fetcher } from '../payments/buy.ts';
import { sanctionsScreen, type WalletScreen } from '../../src/delivery/screen.ts';
import { loadSanctionsList } from '../../src/sanctions/list.ts';
import type { SignalPublic } from '../../src/signals/schemas.ts';

/** Signals, entitlements and registrations written straight to the tables the delivery side reads. */
export function signalFixture(over: Partial<SignalPublic> = {}): SignalPublic {
  return {
    city: 'nyc',
    displayName: 'New York City',
    seq: 1,
    targetDate: '2026-07-15',
    marketUrl: 'https://polymarket.com/event/highest-temperature-in-nyc-on-july-15-2026',
    conditionId: '0x' + 'ab'.repeat(32),
    old: { reading: 83, unit: 'F', bucket: '82-83°F' },
    new: { reading: 84, unit: 'F', bucket: '84-85°F' },
    buckets: [
      { label: '80-81°F', conditionId: '0x01', yes: 0.001, no: 0.999, midpoint: 0.001, dead: true },
      { label: '82-83°F', conditionId: '0x02', yes: 0.002, no: 0.998, midpoint: 0.002, dead: true },
      { label: '84-85°F', conditionId: '0x03', yes: 0.41, no: 0.59, midpoint: 0.41 },
      { label: '86-87°F', conditionId: '0x04', yes: 0.35, no: 0.65, midpoint: 0.35 },
      { label: '88°F or higher', conditionId: '0x05', yes: 0.24, no: 0.76, midpoint: 0.24 },
    ],
    bucketsAsOf: '2026-07-15T15:02:07.000Z',
    source: 'wu',
    observedAt: '2026-07-15T15:02:00.000Z',
    reportedAt: '2026-07-15T14:51:00.000Z',
    channel: 'wu',
    rawReport: null,
    reportedValue: 84,
    reportedUnit: 'F',
    reportedPrecision: 1,
    availableAt: null,
    storedAt: '2026-07-15T15:02:07.300Z',
    ...over,
  };
}

export function insertSignal(db: Db, s: SignalPublic, nowMs = Date.now()): void {
  db.prepare(
    'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(s.city, s.seq, s.targetDate, s.new.bucket, s.observedAt, JSON.stringify(s), nowMs);
}

export function grant(db: Db, wallet: string, city: string, paidThroughSeq: number): void {
  db.prepare(`INSERT INTO entitlements (wallet, city, paid_through_seq, total_paid_signals, updated_at) VALUES (?, ?, ?, ?, 0)
    ON CONFLICT (wallet, city) DO UPDATE SET paid_through_seq = excluded.paid_through_seq`).run(
    wallet.toLowerCase(),
    city,
    paidThroughSeq,
    paidThroughSeq,
  );
}

export function registerChat(db: Db, wallet: string, chatId: string, city: string | null): void {
  db.prepare(`INSERT INTO delivery_registrations (wallet, chat_id, city, created_at, updated_at) VALUES (?, ?, ?, 0, 0)
    ON CONFLICT (wallet) DO UPDATE SET chat_id = excluded.chat_id, city = excluded.city`).run(
    wallet.toLowerCase(),
    chatId,
    city,
  );
}

export function outboxRows(db: Db): {
  id: number;
  wallet: string;
  city: string;
  seq: number;
  status: string;
  attempts: number;
  chat_id: string | null;
  last_error: string | null;
}[] {
  return db
    .prepare('SELECT id, wallet, city, seq, status, attempts, chat_id, last_error FROM delivery_outbox ORDER BY id')
    .all() as never;
}

export const WALLET_A = '0x1111111111111111111111111111111111111111';
export const WALLET_B = '0x2222222222222222222222222222222222222222';
export const WALLET_C = '0x3333333333333333333333333333333333333333';

/** Registers a chat over HTTP with a real EIP-712 signature, as a client would; answers the status. */
export async function registerOverHttp(
  f: Fetcher,
  account: PrivateKeyAccount,
  chatId: string,
  citySlug: string,
  nowMs: number,
): Promise<number> {
  const timestamp = Math.floor(nowMs / 1000);
  const signature = await account.signTypedData(
    deliveryTypedData({ wallet: account.address, chatId, citySlug, action: 'set', timestamp }),
  );
  const res = await f('/v1/delivery/messenger', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet: account.address, chatId, citySlug, action: 'set', signature, timestamp }),
  });
  await res.body?.cancel();
  return res.status;
}

/** A screen over an empty list that is not required: what a test without sanctions runs with. */
export function emptyScreen(): WalletScreen {
  return sanctionsScreen(loadSanctionsList({}), { required: false });
}
