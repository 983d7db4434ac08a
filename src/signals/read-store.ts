import type { Db } from '../db/open.ts';
import { latencyRowOf, type SignalTimes } from './latency.ts';
import type { SignalStore } from './store.ts';

/** Read side of the signals table (store.ts is the write side and holds the latest-seq query). */
export type SignalReader = ReturnType<typeof createSignalReader>;

type PageRange = { since: number; end: number; tail: (lastSeq: number) => string };

const LATEST_MEMO_MS = 1_000;

/** Bytes of cached page heads kept at most (a full page is about 200 KiB). */
const PAGE_CACHE_BYTES = 32 * 1024 * 1024;

/** One index descent per city; `GROUP BY city` reads every signal instead: 1 million rows is tens of ms. */
const LATEST_SEQ_PER_CITY = `WITH RECURSIVE c(city) AS (
    SELECT (SELECT min(city) FROM signals)
    UNION ALL SELECT (SELECT min(city) FROM signals WHERE city > c.city) FROM c WHERE c.city IS NOT NULL)
  SELECT city, (SELECT max(seq) FROM signals s WHERE s.city = c.city) AS n FROM c WHERE city IS NOT NULL`;

/** One per process (src/stores.ts), so its page cache and latest-seq memo are shared. */
export function createSignalReader(db: Db, store: Pick<SignalStore, 'latestSeq'>) {
  const latestAll = db.prepare(LATEST_SEQ_PER_CITY);
  const latestAt = db.prepare(
    `SELECT c.city, s.seq AS n, s.created_at AS at FROM (${LATEST_SEQ_PER_CITY}) c JOIN signals s ON s.city = c.city AND s.seq = c.n`,
  );
  const one = db.prepare('SELECT payload FROM signals WHERE city = ? AND seq = ?').pluck();
  const timings = db.prepare(
    `SELECT city, channel, reported_at AS reportedAt, available_at AS availableAt, observed_at AS observedAt,
      created_at AS storedAtMs FROM signals WHERE created_at > +? ORDER BY created_at DESC LIMIT +?`,
  );
  const page = db.prepare(
    'SELECT seq, payload FROM signals WHERE city = +? AND seq > ? AND seq <= ? ORDER BY seq LIMIT +?',
  );
  // Least recently used first: a hit is moved to the end.
  type Head = { head: Buffer; lastSeq: number; tail: string | null; body: Buffer | null };
  const heads = new Map<string, Head>();
  let cachedBytes = 0;
  const headFor = (city: string, since: number, end: number): Head => {
    const key = `${city}|${since}|${end}`;
    const hit = heads.get(key);
    if (hit) {
      heads.delete(key);
      heads.set(key, hit);
      return hit;
    }
    const rows = end > since ? (page.all(city, since, end, end - since) as { seq: number; payload: string }[]) : [];
    const entry: Head = {
      head: Buffer.from(`{"signals":[${rows.map((r) => r.payload).join(',')}]`),
      lastSeq: rows.at(-1)?.seq ?? since,
      tail: null,
      body: null,
    };
    heads.set(key, entry);
    cachedBytes += entry.head.length;
    return entry;
  };
  // Stored signals never change, so a reader polling the same page allocates nothing.
  const pageBytes = (city: string, { since, end, tail }: PageRange): Buffer => {
    const entry = headFor(city, since, end);
    const t = tail(entry.lastSeq);
    if (entry.body && entry.tail === t) return entry.body;
    cachedBytes -= entry.body?.length ?? 0;
    entry.body = Buffer.concat([entry.head, Buffer.from(t)]);
    entry.tail = t;
    cachedBytes += entry.body.length;
    for (const [k, v] of heads) {
      if (cachedBytes <= PAGE_CACHE_BYTES || v === entry) break;
      heads.delete(k);
      cachedBytes -= v.head.length + (v.body?.length ?? 0);
    }
    return entry.body;
  };
  // max(seq) costs tens of µs and every paid read needs it: remembered until this connection writes
  // (total_changes(), under a µs) or LATEST_MEMO_MS, which bounds staleness if another process wrote.
  const changes = db.prepare('SELECT total_changes()').pluck();
  const memo = new Map<string, number>();
  let memoChanges = -1;
  let memoAt = 0;
  const latestSeq = (city: string): number => {
    const n = changes.get() as number;
    const now = Date.now();
    if (n !== memoChanges || now - memoAt > LATEST_MEMO_MS || now < memoAt) {
      memo.clear();
      memoChanges = n;
      memoAt = now;
    }
    let seq = memo.get(city);
    if (seq === undefined) {
      seq = store.latestSeq(city);
      memo.set(city, seq);
    }
    return seq;
  };
  return {
    latestSeq,
    latestSeqAll: () => new Map((latestAll.all() as { city: string; n: number }[]).map((r) => [r.city, r.n])),
    /** created_at (ms) of each city's latest signal, for `/v1/cities?sort=recent`. */
    latestAtAll: () => new Map((latestAt.all() as { city: string; at: number }[]).map((r) => [r.city, r.at])),
    payload: (city: string, seq: number) => (one.get(city, seq) as string | undefined) ?? null,
    pageBytes,
    /** Timestamps of the newest `limit` signals committed after `sinceMs` (an index range on created_at). */
    latencyRows: (sinceMs: number, limit: number) => {
      const raw = timings.all(sinceMs, limit + 1) as (SignalTimes & { storedAtMs: number })[];
      return { rows: raw.slice(0, limit).map((r) => latencyRowOf(r, r.storedAtMs)), truncated: raw.length > limit };
    },
  };
}

type DaySignalRow = { seq: number; payload: string; createdAt: number };

/** One city-day's stored signals in seq order, for `isocast explain` on its own read-only connection. */
export function createDaySignals(db: Db): (city: string, targetDate: string) => DaySignalRow[] {
  const day = db.prepare(
    'SELECT seq, payload, created_at AS createdAt FROM signals WHERE city = +? AND target_date = +? ORDER BY seq',
  );
  return (city, targetDate) => day.all(city, targetDate) as DaySignalRow[];
}
