import type { Db } from '../db/open.ts';
import { encodeRow, REPLICATED_TABLES, type Change, type ReplicatedTable } from './tables.ts';

export type ReplicationOutbox = ReturnType<typeof createReplicationOutbox>;

/** A change is published as its row is then (triggers queue the key): several writes arrive as the newest. */
export function createReplicationOutbox(db: Db) {
  const recording = db.prepare('SELECT recording FROM replication_state WHERE id = 1').pluck();
  const setRecording = db.prepare('UPDATE replication_state SET recording = 1 WHERE id = 1');
  const batch = db.prepare('SELECT id, tbl, key FROM replication_outbox ORDER BY id LIMIT +?');
  const drop = db.prepare('DELETE FROM replication_outbox WHERE id <= ?');
  const last = db
    .prepare(`SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'replication_outbox'`)
    .pluck();
  const count = db.prepare('SELECT count(*) FROM replication_outbox').pluck();
  const created = db.prepare('SELECT stream_created FROM replication_state WHERE id = 1').pluck();
  const setCreated = db.prepare('UPDATE replication_state SET stream_created = ? WHERE id = 1');
  const tables = Object.entries(REPLICATED_TABLES) as [ReplicatedTable, readonly string[]][];
  const seeds = tables.map(([t, key]) =>
    db.prepare(
      `INSERT INTO replication_outbox (tbl, key) SELECT '${t}', json_array(${key.join(', ')}) FROM ${t} ORDER BY ${key.join(', ')}`,
    ),
  );
  const rowOf = Object.fromEntries(
    tables.map(([t, key]) => [t, db.prepare(`SELECT * FROM ${t} WHERE ${key.map((c) => `${c} = ?`).join(' AND ')}`)]),
  ) as Record<ReplicatedTable, ReturnType<Db['prepare']>>;
  // Signals first: an entitlement's ceiling is read against the seqs a reader already has.
  const seed = () => {
    for (const s of seeds) s.run();
  };
  return {
    recording: () => recording.get() === 1,
    /** Turns the triggers on and queues every existing row, in one transaction (first start with NATS). */
    startRecording: db.transaction(() => {
      if (recording.get() === 1) return;
      setRecording.run();
      seed();
    }),
    /** The oldest `limit` queued changes, each read as its row is now. */
    next(limit: number): { id: number; change: Change }[] {
      const rows = batch.all(limit) as { id: number; tbl: ReplicatedTable; key: string }[];
      return rows.map(({ id, tbl, key }) => {
        const k = JSON.parse(key) as (string | number)[];
        const row = rowOf[tbl].get(k) as Record<string, unknown> | undefined;
        return { id, change: { t: tbl, k, r: row ? encodeRow(row) : null } };
      });
    },
    published: (throughId: number) => {
      drop.run(throughId);
    },
    /** The newest id ever queued (moves on every recorded change: the publisher's wake-up check). */
    lastId: () => last.get() as number,
    backlog: () => count.get() as number,
    /** The stream published to; one created anew (its store was lost) lacks the rows already published: all are queued again. */
    useStream: db.transaction((c: string) => {
      const was = (created.get() as string | null) ?? null;
      if (was === c) return;
      if (was !== null) seed();
      setCreated.run(c);
    }),
  };
}
