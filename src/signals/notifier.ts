import type { Db } from '../db/open.ts';
import { perConnection } from '../lib/per-connection.ts';

/**
 * Wakes long-poll reads (`GET /v1/signals?wait=N`, issue 25.4) when a signal commits. The signal
 * store calls `committed` right after its transaction (store.ts), so a held read is answered in
 * the same tick the row becomes visible: no timer per request polls the database. One notifier
 * per database connection (`signalNotifierFor(db)`), shared by the poller's store and the routes.
 */
export type WakeReason = 'signal' | 'timeout' | 'aborted' | 'stopped';

export type SignalNotifier = {
  /** A signal with this seq committed for the city: wakes every waiter whose `since` is below it. */
  committed(city: string, seq: number): void;
  /**
   * Resolves when a signal with seq > since commits for the city, after `ms`, when `abort` fires
   * (the client went away: the waiter is freed at once) or at shutdown (`releaseAll`).
   */
  wait(city: string, since: number, ms: number, abort?: AbortSignal): Promise<WakeReason>;
  /** Requests held right now, across cities. */
  waiting(): number;
  /** Shutdown: answers every held read now, and every later wait at once. */
  releaseAll(): void;
};

type Waiter = { since: number; done(reason: WakeReason): void };

export function createSignalNotifier(): SignalNotifier {
  const byCity = new Map<string, Set<Waiter>>();
  let count = 0;
  let stopped = false;

  return {
    committed(city, seq) {
      const set = byCity.get(city);
      if (!set) return;
      for (const w of set) if (w.since < seq) w.done('signal');
    },
    wait(city, since, ms, abort) {
      if (stopped) return Promise.resolve('stopped');
      if (abort?.aborted) return Promise.resolve('aborted');
      return new Promise<WakeReason>((resolve) => {
        let set = byCity.get(city);
        if (!set) {
          set = new Set();
          byCity.set(city, set);
        }
        const waiters = set;
        const onAbort = () => waiter.done('aborted');
        const timer = setTimeout(() => waiter.done('timeout'), ms);
        const waiter: Waiter = {
          since,
          done(reason) {
            if (!waiters.delete(waiter)) return;
            count--;
            if (waiters.size === 0) byCity.delete(city);
            clearTimeout(timer);
            abort?.removeEventListener('abort', onAbort);
            resolve(reason);
          },
        };
        waiters.add(waiter);
        count++;
        abort?.addEventListener('abort', onAbort, { once: true });
      });
    },
    waiting: () => count,
    releaseAll() {
      stopped = true;
      for (const set of [...byCity.values()]) for (const w of [...set]) w.done('stopped');
    },
  };
}

/** The notifier of one database connection: the store that writes and the routes that wait share it. */
export const signalNotifierFor = perConnection((_db: Db) => createSignalNotifier());
