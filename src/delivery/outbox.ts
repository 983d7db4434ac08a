import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import type { SignalPublic } from '../signals/schemas.ts';
import type { SignalReader } from '../signals/read-store.ts';
import { SANCTIONED_NOT_PUSHED, type WalletScreen } from './screen.ts';

/** The push outbox. The claim (queued -> sending) commits before the send: delivery is at-most-once. */
export type OutboxStatus = 'queued' | 'sending' | 'sent' | 'failed';

export type DueRow = {
  id: number;
  wallet: string;
  city: string;
  seq: number;
  attempts: number;
  createdAt: number;
  /** Current registration of the wallet; null once it was deleted. */
  chatId: string | null;
  registeredCity: string | null;
  payload: string;
};

export type Outbox = ReturnType<typeof createOutbox>;

let screenFunctions = 0;

/** `reader` is the process's one signal reader (src/stores.ts). */
export function createOutbox(
  db: Db,
  deps: { clock: Clock; screen: WalletScreen; reader: Pick<SignalReader, 'payload'> },
) {
  const { clock, screen, reader: signals } = deps;
  // The in-memory list (swapped on reload) screens inside the one statement through a SQL function,
  // one name per outbox so two outboxes on one connection never use each other's list.
  const listed = `isocast_listed_${++screenFunctions}`;
  db.function(listed, { deterministic: false }, (wallet) => (screen.listed(String(wallet)) ? 1 : 0));
  // One join, not a statement per wallet (docs/architecture.md, Tables). A listed wallet's row is `failed`,
  // not skipped: the operator sees the withheld push and the unique key keeps it from being queued later.
  const enqueue = db.prepare(`INSERT OR IGNORE INTO delivery_outbox
      (wallet, city, target_date, bucket, seq, status, attempts, next_attempt_at, created_at, updated_at, last_error)
    SELECT s.wallet, @city, @date, @bucket, @seq, CASE WHEN s.listed THEN 'failed' ELSE 'queued' END, 0, @now, @now, @now,
      CASE WHEN s.listed THEN @sanctioned END
    FROM (SELECT r.wallet AS wallet, ${listed}(r.wallet) AS listed
      FROM delivery_registrations r
      JOIN entitlements e ON e.wallet = r.wallet AND e.city = @city
      WHERE (r.city IS NULL OR r.city = @city) AND e.paid_through_seq >= @seq) s`);
  const due = db.prepare(`SELECT o.id, o.wallet, o.city, o.seq, o.attempts, o.created_at AS createdAt,
      r.chat_id AS chatId, r.city AS registeredCity
    FROM delivery_outbox o
    LEFT JOIN delivery_registrations r ON r.wallet = o.wallet
    WHERE o.status = 'queued' AND o.next_attempt_at <= ?
    ORDER BY o.next_attempt_at, o.id LIMIT +?`);
  const nextAt = db.prepare(`SELECT min(next_attempt_at) FROM delivery_outbox WHERE status = 'queued'`).pluck();
  const claim =
    db.prepare(`UPDATE delivery_outbox SET status = 'sending', attempts = attempts + 1, chat_id = ?, updated_at = ?
    WHERE id = ? AND status = 'queued'`);
  const sent = db.prepare(
    `UPDATE delivery_outbox SET status = 'sent', last_error = NULL, updated_at = ? WHERE id = ? AND status = 'sending'`,
  );
  const requeue =
    db.prepare(`UPDATE delivery_outbox SET status = 'queued', next_attempt_at = ?, last_error = ?, updated_at = ?
    WHERE id = ? AND status = 'sending'`);
  const failed = db.prepare(`UPDATE delivery_outbox SET status = 'failed', last_error = ?, updated_at = ?
    WHERE id = ? AND status IN ('queued', 'sending')`);
  const failSending = db.prepare(
    `UPDATE delivery_outbox SET status = 'failed', last_error = ?, updated_at = ? WHERE status = 'sending'`,
  );
  const counts = createOutboxCounts(db);

  return {
    /** One row per entitled registration, `failed` at once for a listed wallet; storeSignal's `inTransaction` hook. */
    enqueue: (s: SignalPublic): number =>
      enqueue.run({
        city: s.city,
        date: s.targetDate,
        bucket: s.new.bucket ?? '',
        seq: s.seq,
        now: clock.now(),
        sanctioned: SANCTIONED_NOT_PUSHED,
      }).changes,
    due: (nowMs: number, limit: number): DueRow[] =>
      (due.all(nowMs, limit) as Omit<DueRow, 'payload'>[]).flatMap((r) => {
        const payload = signals.payload(r.city, r.seq);
        return payload === null ? [] : [{ ...r, payload }];
      }),
    nextAttemptAt: (): number | null => (nextAt.get() as number | null) ?? null,
    /** queued -> sending, committed; false if another claimer won. */
    claim: (id: number, chatId: string, nowMs: number) => claim.run(chatId, nowMs, id).changes === 1,
    markSent: (id: number, nowMs: number) => void sent.run(nowMs, id),
    /** For failures known to precede the platform accepting the message. */
    requeue: (id: number, r: { nextAttemptAt: number; error: string; nowMs: number }) =>
      void requeue.run(r.nextAttemptAt, r.error, r.nowMs, id),
    markFailed: (id: number, error: string, nowMs: number) => void failed.run(error, nowMs, id),
    /** Rows left in `sending` may have reached the chat, so they are failed, not resent. */
    failInterrupted: (nowMs: number) =>
      failSending.run('interrupted while sending; outcome unknown, not resent', nowMs).changes,
    counts,
    screen,
  };
}

/** Outbox rows by status, from row_counts (kept by triggers): a GROUP BY would read every row ever queued. */
export function createOutboxCounts(db: Db): () => Record<OutboxStatus, number> {
  const counts = db.prepare(`SELECT substr(name, 8) AS status, n FROM row_counts WHERE name LIKE 'outbox:%'`);
  return () => {
    const out: Record<OutboxStatus, number> = { queued: 0, sending: 0, sent: 0, failed: 0 };
    for (const r of counts.all() as { status: OutboxStatus; n: number }[]) out[r.status] = r.n;
    return out;
  };
}

/** The newest outbox rows, by id (the rowid: no sort), each with its current status (the operator page). */
export function createOutboxRecent(db: Db): (limit: number) => Record<string, unknown>[] {
  const recent = db.prepare(
    `SELECT id, wallet, city, target_date, bucket, seq, status, attempts, last_error, updated_at FROM delivery_outbox ORDER BY id DESC LIMIT +?`,
  );
  return (limit) => recent.all(limit) as Record<string, unknown>[];
}

/** One retention batch (ops/retention.ts): up to `limit` sent or failed rows last changed before `cutoff`. */
export function createOutboxPrune(db: Db): { run(cutoff: number, limit: number): { changes: number } } {
  const prune = db.prepare(`DELETE FROM delivery_outbox WHERE id IN (SELECT id FROM delivery_outbox
    WHERE status IN ('sent', 'failed') AND updated_at < ? LIMIT +?)`);
  return { run: (cutoff, limit) => prune.run(cutoff, limit) };
}
