/**
 * The tables a reader answers from (salt_steps: so its 402 offers the salt the primary accepts),
 * with their keys. Rows travel whole (`SELECT *`), so a column a migration adds is copied without
 * a change here; a reader writes only the columns its own table has.
 */
export const REPLICATED_TABLES = {
  signals: ['city', 'seq'],
  entitlements: ['wallet', 'city'],
  receipts: ['selector'],
  salt_steps: ['city', 'count', 'k'],
} as const satisfies Record<string, readonly string[]>;

export type ReplicatedTable = keyof typeof REPLICATED_TABLES;

export const STREAM = 'ISOCAST_REPLICATION';
export const SUBJECT_ROOT = 'isocast.rep';
/** The primary's "my outbox was empty at this instant" message; a reader measures its lag by it. */
export const HEARTBEAT_SUBJECT = `${SUBJECT_ROOT}.heartbeat`;
export const SINGLE_USE_BUCKET = 'isocast-single-use';

type Value = string | number | null | { $b64: string };
export type Row = Record<string, Value>;

/** The row as the primary has it now, or null when it is gone. */
export type Change = { t: ReplicatedTable; k: (string | number)[]; r: Row | null };
export type Heartbeat = { hb: number };

/** A row from better-sqlite3 as JSON: a BLOB (a receipt's verifier hash) as base64. */
export function encodeRow(row: Record<string, unknown>): Row {
  const out: Row = {};
  for (const [c, v] of Object.entries(row)) {
    if (Buffer.isBuffer(v) || v instanceof Uint8Array) out[c] = { $b64: Buffer.from(v).toString('base64') };
    else if (typeof v === 'bigint') out[c] = Number(v);
    else out[c] = v as string | number | null;
  }
  return out;
}

export function decodeRow(row: Row): Record<string, string | number | null | Buffer> {
  const out: Record<string, string | number | null | Buffer> = {};
  for (const [c, v] of Object.entries(row))
    out[c] = v !== null && typeof v === 'object' ? Buffer.from(v.$b64, 'base64') : v;
  return out;
}

/**
 * One subject per row: the stream keeps the newest message of each (max_msgs_per_subject 1), so an
 * empty reader replays the current rows, not every change since the first sale. A key part that
 * is not a plain token (dots, spaces, wildcards) is hex-escaped behind `~`.
 */
export function subjectOf(t: ReplicatedTable, key: readonly (string | number)[]): string {
  const token = (v: string | number) => {
    const s = String(v);
    return /^[A-Za-z0-9_-]+$/.test(s) ? s : `~${Buffer.from(s).toString('hex')}`;
  };
  return `${SUBJECT_ROOT}.${t}.${key.map(token).join('.')}`;
}
