import { backoffMs } from '../lib/backoff.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { SignalPublic } from '../signals/schemas.ts';
import { formatSignalMessage } from './message.ts';
import { MessengerError, type Messenger } from './messenger.ts';
import type { DueRow, Outbox } from './outbox.ts';
import { SANCTIONED_NOT_PUSHED } from './screen.ts';

/**
 * Pushes claimed rows (at-most-once: outbox.ts), retrying only failures known to precede the
 * platform's acceptance; one send per chat in flight.
 */
const MAX_IN_FLIGHT = 16;
/** Longest sleep with nothing due; wake() cuts it short when a signal commits. */
const IDLE_MS = 30_000;
const BATCH = 200;

/** How soon the worker looks again while no sanctions list is in force. */
const UNSCREENED_RECHECK_MS = 5_000;

const logFields = (row: DueRow) => ({ id: row.id, wallet: row.wallet, city: row.city, seq: row.seq });

export function createDeliveryWorker(deps: {
  outbox: Outbox;
  messenger: Messenger;
  clock: Clock;
  logger: Logger;
  termsUrl: string;
  metrics?: Metrics;
  options?: { maxAttempts?: number; baseBackoffMs?: number; maxBackoffMs?: number };
}) {
  const { outbox, messenger, clock, termsUrl } = deps;
  // The outbox's screen: the enqueue and the send ask the same list.
  const screen = outbox.screen;
  const logger = deps.logger.child({ component: 'delivery' });
  const { maxAttempts = 5, baseBackoffMs = 2_000, maxBackoffMs = 300_000 } = deps.options ?? {};

  let running = false;
  let loopDone: Promise<void> = Promise.resolve();
  let woken = false;
  let wakeUp: (() => void) | null = null;
  const inFlight = new Set<Promise<void>>();
  const busyChats = new Set<string>();
  let idleWaiters: (() => void)[] = [];
  let unscreenedWarned = false;
  const outcomes = deps.metrics?.counter(
    'isocast_delivery_sends_total',
    'Chat sends by outcome (sent, retry, failed, withheld: wallet sanctioned)',
  );
  const latency = deps.metrics?.histogram(
    'isocast_delivery_latency_seconds',
    'Signal stored to message acknowledged by the bot platform',
    [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  );

  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  const releaseIdle = () => {
    for (const resolve of idleWaiters) resolve();
    idleWaiters = [];
  };

  const settleFailure = (row: DueRow, err: unknown) => {
    const e =
      err instanceof MessengerError
        ? err
        : new MessengerError('ambiguous', err instanceof Error ? err.message : String(err));
    const now = clock.now();
    const attempt = row.attempts + 1;
    const error = e.kind === 'cancelled' ? e.message : `${e.kind}: ${e.message}`;
    const at = { ...logFields(row), attempt, kind: e.kind };
    if (e.retryable && attempt < maxAttempts) {
      const wait = Math.max(backoffMs(attempt, baseBackoffMs, maxBackoffMs), e.retryAfterMs ?? 0);
      outbox.requeue(row.id, { nextAttemptAt: now + wait, error, nowMs: now });
      outcomes?.inc({ outcome: 'retry' });
      logger.warn('delivery will be retried', { ...at, retryInMs: wait });
    } else {
      outbox.markFailed(row.id, error, now);
      outcomes?.inc({ outcome: e.kind === 'cancelled' ? 'withheld' : 'failed' });
      logger.warn('delivery failed', { ...at, reason: e.message });
    }
  };

  // Asked again just before the request leaves: a reload in between (SIGHUP) withholds the message
  // (availability holds once a list has loaded: a failed reload keeps the last good one).
  const withheld = (wallet: string) => () => (screen.listed(wallet) ? SANCTIONED_NOT_PUSHED : null);

  const dispatch = (row: DueRow, chatId: string, text: string) => {
    busyChats.add(chatId);
    const p: Promise<void> = messenger
      .send(chatId, text, { cancelIf: withheld(row.wallet) })
      .then(
        () => {
          const now = clock.now();
          outbox.markSent(row.id, now);
          outcomes?.inc({ outcome: 'sent' });
          latency?.observe(Math.max(0, now - row.createdAt) / 1000);
        },
        (err) => settleFailure(row, err),
      )
      .catch((err) => logger.error('delivery state update failed', { id: row.id, err }))
      .finally(() => {
        inFlight.delete(p);
        busyChats.delete(chatId);
        wake();
      });
    inFlight.add(p);
  };

  /** One scheduling pass; returns how long to sleep before the next unless woken. */
  const pump = (): number => {
    if (!messenger.configured) {
      releaseIdle();
      return IDLE_MS;
    }
    if (!screen.available()) {
      // Fail closed: with no sanctions list in force nothing is sent; the rows wait, unchanged,
      // until a list loads (a reload does not wake the worker, so look again shortly).
      if (!unscreenedWarned) logger.warn('sanctions screening unavailable; deliveries held until a list loads');
      unscreenedWarned = true;
      releaseIdle();
      return Math.min(IDLE_MS, UNSCREENED_RECHECK_MS);
    }
    unscreenedWarned = false;
    const now = clock.now();
    let sleepMs = IDLE_MS;
    const rows = inFlight.size >= MAX_IN_FLIGHT ? [] : outbox.due(now, BATCH);
    for (const row of rows) {
      if (inFlight.size >= MAX_IN_FLIGHT) break;
      if (screen.listed(row.wallet)) {
        // Listed after the signal was queued: withheld for good, like a push queued while listed.
        outbox.markFailed(row.id, SANCTIONED_NOT_PUSHED, now);
        outcomes?.inc({ outcome: 'withheld' });
        logger.warn('delivery withheld: wallet is sanctioned', logFields(row));
        continue;
      }
      if (row.chatId === null || (row.registeredCity !== null && row.registeredCity !== row.city)) {
        outbox.markFailed(row.id, 'registration deleted or moved to another city before sending', now);
        continue;
      }
      if (busyChats.has(row.chatId)) continue;
      const wait = messenger.waitMs(row.chatId);
      if (wait > 0) {
        sleepMs = Math.min(sleepMs, wait);
        continue;
      }
      let text: string;
      try {
        text = formatSignalMessage(JSON.parse(row.payload) as SignalPublic, { termsUrl });
      } catch (err) {
        outbox.markFailed(row.id, 'stored signal could not be formatted', now);
        logger.error('delivery message formatting failed', { id: row.id, err });
        continue;
      }
      if (!outbox.claim(row.id, row.chatId, now)) continue;
      dispatch(row, row.chatId, text);
    }
    const next = outbox.nextAttemptAt();
    if (next !== null && next > now) sleepMs = Math.min(sleepMs, next - now);
    if (inFlight.size === 0 && next === null) releaseIdle();
    return Math.max(0, sleepMs);
  };

  const loop = async () => {
    while (running) {
      woken = false;
      let sleepMs: number;
      try {
        sleepMs = pump();
      } catch (err) {
        logger.error('delivery pass failed', { err });
        sleepMs = 1_000;
      }
      if (!running) break;
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, sleepMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = null;
    }
  };

  return {
    start() {
      if (running) return;
      running = true;
      const interrupted = outbox.failInterrupted(clock.now());
      if (interrupted > 0)
        logger.warn('deliveries interrupted by a stop were failed, not resent', { count: interrupted });
      if (!messenger.configured) logger.info('messenger bot not configured; delivery worker idles');
      loopDone = loop();
    },
    /** Call after a transaction that queued rows commits. */
    wake,
    /** Stops claiming and waits for sends in flight to settle (each is bounded by its timeout). */
    async stop() {
      running = false;
      wake();
      await loopDone;
      await Promise.allSettled([...inFlight]);
      releaseIdle();
    },
    /** Resolves once nothing is queued (even for later) and nothing is in flight: tests and measurements. */
    whenIdle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        wake();
      }),
  };
}
