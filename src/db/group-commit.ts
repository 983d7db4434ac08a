import type { Db } from './open.ts';

/**
 * Group commit for the payment writes. A purchase commits twice (its claim before the settle call,
 * then the transfer recorded and applied), and under load the recoveries come back from their
 * thread in bursts: one turn of the event loop finishes several purchases' steps (7.5 writes per
 * commit on average under a saturating load on 2 cores). Each step queued here runs at the end of
 * the turn (setImmediate) inside one shared SQLite transaction, and its caller's promise settles
 * only after that COMMIT returned, so nothing is answered, and no settle call starts, before the
 * write it depends on is in the WAL. A batch writes the pages its
 * units share (the payments leaf, the right edge of every time index, the row counters) once, not
 * once per unit, and pays one commit's locking and WAL-index work.
 *
 * The batch runs synchronously from BEGIN to COMMIT, so no other code on this connection ever
 * sees its uncommitted rows. Units run in the order they were queued and each sees the ones before
 * it, as sequential transactions would. When anything fails (a unit throws, or the COMMIT does),
 * the whole batch is rolled back and every unit runs again alone, in order, in its own
 * transaction: a unit's error reaches only its own caller, with nothing of it stored, exactly as
 * before batching. Units must therefore be synchronous, touch nothing but the database, and give
 * the same effect when run again after a rollback (a receipt token drawn again is a new token).
 */
export type GroupCommit = {
  /** Runs `unit` in the next group commit; resolves with its value once committed, or rejects with its error. */
  run<T>(unit: () => T): Promise<T>;
};

/** Units per transaction at most: bounds the time one flush holds the event loop. */
const MAX_UNITS_PER_COMMIT = 64;

type Queued = { unit: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void };

export function createGroupCommit(
  db: Db,
  opts: { maxUnits?: number; onCommit?: (units: number) => void } = {},
): GroupCommit {
  const maxUnits = opts.maxUnits ?? MAX_UNITS_PER_COMMIT;
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const alone = db.transaction((unit: () => unknown) => checked(unit()));
  let queue: Queued[] = [];

  function checked(value: unknown): unknown {
    if (value && typeof (value as { then?: unknown }).then === 'function')
      throw new TypeError('a group-commit unit must be synchronous');
    return value;
  }

  function runAlone(q: Queued): void {
    let value: unknown;
    try {
      value = alone(q.unit);
    } catch (err) {
      q.reject(err);
      return;
    }
    q.resolve(value);
    opts.onCommit?.(1);
  }

  function runBatch(items: Queued[]): void {
    if (items.length === 1) {
      runAlone(items[0]!);
      return;
    }
    const values: unknown[] = [];
    try {
      begin.run();
      for (const q of items) values.push(checked(q.unit()));
      commit.run();
    } catch {
      try {
        if (db.inTransaction) rollback.run();
      } catch {
        // SQLite already rolled back (it does on some I/O and full-disk errors).
      }
      for (const q of items) runAlone(q);
      return;
    }
    for (let i = 0; i < items.length; i++) items[i]!.resolve(values[i]);
    opts.onCommit?.(items.length);
  }

  function flush(): void {
    // A transaction still open at the end of a turn would be someone else's, held across an await:
    // the batch waits for it rather than commit inside it and report writes that could roll back.
    if (db.inTransaction) {
      setTimeout(flush, 1);
      return;
    }
    const all = queue;
    queue = [];
    for (let i = 0; i < all.length; i += maxUnits) runBatch(all.slice(i, i + maxUnits));
  }

  return {
    run<T>(unit: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ unit, resolve: resolve as (v: unknown) => void, reject });
      });
    },
  };
}
