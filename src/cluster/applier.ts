import type { Db } from '../db/open.ts';
import type { SignalNotifier } from '../signals/notifier.ts';
import { decodeRow, REPLICATED_TABLES, type Change, type ReplicatedTable } from './tables.ts';

/**
 * A reader's side: each batch and the stream sequence it reaches commit in one transaction, so a
 * reader killed at any instant restarts from exactly the last change it holds. After the commit,
 * long-polls held on a city whose signal arrived are woken, as the primary's commit wakes its own.
 */
export type StreamMessage = { seq: number; change: Change | null };

export type Applier = ReturnType<typeof createApplier>;

export function createApplier(db: Db, notifier: Pick<SignalNotifier, 'committed'>) {
  const seq = db.prepare('SELECT applied_seq FROM replication_state WHERE id = 1').pluck();
  const setSeq = db.prepare('UPDATE replication_state SET applied_seq = ? WHERE id = 1');
  const created = db.prepare('SELECT stream_created FROM replication_state WHERE id = 1').pluck();
  const restart = db.prepare('UPDATE replication_state SET applied_seq = 0, stream_created = ? WHERE id = 1');
  const columnsOf = new Map<ReplicatedTable, Set<string>>();
  for (const t of Object.keys(REPLICATED_TABLES) as ReplicatedTable[])
    columnsOf.set(t, new Set((db.pragma(`table_info(${t})`) as { name: string }[]).map((c) => c.name)));
  const statements = new Map<string, ReturnType<Db['prepare']>>();
  const prepared = (sql: string) => statements.get(sql) ?? statements.set(sql, db.prepare(sql)).get(sql)!;
  const deletes = Object.fromEntries(
    Object.entries(REPLICATED_TABLES).map(([t, key]) => [
      t,
      db.prepare(`DELETE FROM ${t} WHERE ${key.map((c) => `${c} = ?`).join(' AND ')}`),
    ]),
  ) as Record<ReplicatedTable, ReturnType<Db['prepare']>>;

  const applyOne = (c: Change) => {
    if (c.r === null) {
      deletes[c.t].run(c.k);
      return;
    }
    const known = columnsOf.get(c.t)!;
    const row = decodeRow(c.r);
    const cols = Object.keys(row).filter((k) => known.has(k));
    const key: readonly string[] = REPLICATED_TABLES[c.t];
    const rest = cols.filter((k) => !key.includes(k));
    // An upsert, not INSERT OR REPLACE: REPLACE deletes without running the delete triggers, so
    // the trigger-kept row counts (schema.sql 0007) would drift on every update.
    const onConflict = rest.length
      ? `DO UPDATE SET ${rest.map((k) => `${k} = excluded.${k}`).join(', ')}`
      : 'DO NOTHING';
    prepared(
      `INSERT INTO ${c.t} (${cols.join(', ')}) VALUES (${cols.map((k) => `@${k}`).join(', ')})
        ON CONFLICT (${key.join(', ')}) ${onConflict}`,
    ).run(Object.fromEntries(cols.map((k) => [k, row[k]])));
  };
  const write = db.transaction((batch: readonly StreamMessage[]) => {
    for (const m of batch) if (m.change) applyOne(m.change);
    setSeq.run(batch[batch.length - 1]!.seq);
  });
  return {
    /** Applies the changes (a null change only moves the sequence: a heartbeat) and records `seq`. */
    apply(batch: readonly StreamMessage[]) {
      if (batch.length === 0) return;
      write(batch);
      for (const m of batch)
        if (m.change?.t === 'signals' && m.change.r) notifier.committed(String(m.change.k[0]), Number(m.change.k[1]));
    },
    appliedSeq: () => seq.get() as number,
    /** A different stream than the one `appliedSeq` counts in: start over from its first message; the one it replaces, or null. */
    useStream(c: string): string | null {
      const was = (created.get() as string | null) ?? null;
      if (was !== c) restart.run(c);
      return was === c ? null : was;
    },
  };
}
