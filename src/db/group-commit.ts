import type { Db } from './open.ts';

/** Units per transaction at most: bounds the time one flush holds the event loop. */
const MAX_UNITS_PER_COMMIT = 64;

type Queued = { unit: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void };

/**
 * One turn's payment writes (7.5 per commit on 2 cores under load) share one transaction, each promise settled
 * after COMMIT; on failure each unit runs again alone, so units are synchronous, database-only and rerunnable.
 */
export function createGroupCommit(db: Db, opts: { onCommit?: (units: number) => void } = {}) {
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
    // Someone else's transaction held across an await: committing inside it could report writes that roll back.
    if (db.inTransaction) {
      setTimeout(flush, 1);
      return;
    }
    const all = queue;
    queue = [];
    for (let i = 0; i < all.length; i += MAX_UNITS_PER_COMMIT) runBatch(all.slice(i, i + MAX_UNITS_PER_COMMIT));
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

export type GroupCommit = ReturnType<typeof createGroupCommit>;
