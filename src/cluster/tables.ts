import type { Db } from '../db/open.ts';
import type { SignalNotifier } from '../signals/notifier.ts';

/**
 * The tables a reader answers from (salt_steps: so its 402 offers the salt the primary accepts), with their
 * keys. Rows travel whole, so a column a migration adds needs no change here; a reader writes the ones it has.
 */
const REPLICATED_TABLES = {
  signals: ['city', 'seq'],
  entitlements: ['wallet', 'city'],
  receipts: ['selector'],
  salt_steps: ['city', 'count', 'k'],
} as const satisfies Record<string, readonly string[]>;

type ReplicatedTable = keyof typeof REPLICATED_TABLES;

export const STREAM = 'ISOCAST_REPLICATION';
export const SUBJECT_ROOT = 'isocast.rep';
/** The primary's "my outbox was empty at this instant" message; a reader measures its lag by it. */
export const HEARTBEAT_SUBJECT = `${SUBJECT_ROOT}.heartbeat`;
export const SINGLE_USE_BUCKET = 'isocast-single-use';

type Value = string | number | null | { $b64: string };
type Row = Record<string, Value>;

export type Change = { t: ReplicatedTable; k: (string | number)[]; r: Row | null };
export type Heartbeat = { hb: number };

/** A row from better-sqlite3 as JSON: a BLOB (a receipt's verifier hash) as base64. */
function encodeRow(row: Record<string, unknown>): Row {
  const out: Row = {};
  for (const [c, v] of Object.entries(row)) {
    if (Buffer.isBuffer(v) || v instanceof Uint8Array) out[c] = { $b64: Buffer.from(v).toString('base64') };
    else if (typeof v === 'bigint') out[c] = Number(v);
    else out[c] = v as string | number | null;
  }
  return out;
}

function decodeRow(row: Row): Record<string, string | number | null | Buffer> {
  const out: Record<string, string | number | null | Buffer> = {};
  for (const [c, v] of Object.entries(row))
    out[c] = v !== null && typeof v === 'object' ? Buffer.from(v.$b64, 'base64') : v;
  return out;
}

/** One subject per row (the stream keeps the newest of each); a key part not a plain token is hex behind `~`. */
export function subjectOf(t: ReplicatedTable, key: readonly (string | number)[]): string {
  const token = (v: string | number) => {
    const s = String(v);
    return /^[A-Za-z0-9_-]+$/.test(s) ? s : `~${Buffer.from(s).toString('hex')}`;
  };
  return `${SUBJECT_ROOT}.${t}.${key.map(token).join('.')}`;
}

const byKey = (db: Db, sql: (t: string, where: string) => string) =>
  Object.fromEntries(
    Object.entries(REPLICATED_TABLES).map(([t, key]) => [
      t,
      db.prepare(sql(t, key.map((c) => `${c} = ?`).join(' AND '))),
    ]),
  ) as Record<ReplicatedTable, ReturnType<Db['prepare']>>;

/** A change is published as its row is then (triggers queue the key): several writes arrive as the newest. */
export type ReplicationOutbox = ReturnType<typeof createReplicationOutbox>;

export function createReplicationOutbox(db: Db) {
  const setRecording = db.prepare('UPDATE replication_state SET recording = 1 WHERE id = 1 AND recording = 0');
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
  const rowOf = byKey(db, (t, where) => `SELECT * FROM ${t} WHERE ${where}`);
  // Signals first: an entitlement's ceiling is read against the seqs a reader already has.
  const seed = () => {
    for (const s of seeds) s.run();
  };
  return {
    /** Turns the triggers on and queues every existing row, in one transaction (first start with NATS). */
    startRecording: db.transaction(() => {
      if (setRecording.run().changes > 0) seed();
    }),
    next(limit: number): { id: number; change: Change }[] {
      const rows = batch.all(limit) as { id: number; tbl: ReplicatedTable; key: string }[];
      return rows.map(({ id, tbl, key }) => {
        const k = JSON.parse(key) as (string | number)[];
        const row = rowOf[tbl].get(k) as Record<string, unknown> | undefined;
        return { id, change: { t: tbl, k, r: row ? encodeRow(row) : null } };
      });
    },
    published: (throughId: number) => void drop.run(throughId),
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

/** A batch and its stream sequence commit together, so a killed reader restarts from the last change it holds. */
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
  const deletes = byKey(db, (t, where) => `DELETE FROM ${t} WHERE ${where}`);

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
