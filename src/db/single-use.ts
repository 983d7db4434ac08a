import { singleUseCutoff } from '../lib/signed-request.ts';
import type { Db } from './open.ts';

/** Single use of signed requests (spec 8), a table per kind, each the size of one clock window (singleUseCutoff). */
type SingleUseTable<Use> = {
  table: string;
  key: readonly (keyof Use & string)[];
  /** Every column a use writes, the key's among them. */
  columns: readonly (keyof Use & string)[];
  /** The indexed column a use ages by (a signed timestamp or a signed expiry) and its unit. */
  agedBy: { column: keyof Use & string; unit: 's' | 'ms' };
};

/** Across read nodes (cluster/start.ts): false when another node used the key; throws when it cannot tell. */
export type CrossNodeUses = { claim(table: string, key: string): Promise<boolean> };

export function createSingleUse<Use extends Record<string, string | number>>(
  db: Db,
  t: SingleUseTable<Use>,
  across?: CrossNodeUses,
) {
  const insert = db.prepare(
    `INSERT INTO ${t.table} (${t.columns.join(', ')}) VALUES (${t.columns.map((c) => `@${c}`).join(', ')})
      ON CONFLICT DO NOTHING`,
  );
  const prune = db.prepare(`DELETE FROM ${t.table} WHERE ${t.agedBy.column} < ?`);
  const found = db.prepare(`SELECT 1 FROM ${t.table} WHERE ${t.key.map((c) => `${c} = @${c}`).join(' AND ')}`).pluck();
  return {
    /** True the first time this use's key is seen (and then recorded); run it inside the caller's transaction. */
    consume(use: Use, nowMs: number): boolean {
      if (insert.run(use).changes !== 1) return false;
      prune.run(singleUseCutoff(nowMs, t.agedBy.unit));
      return true;
    },
    has: (key: Partial<Use>) => found.get(key) !== undefined,
    /** Before `consume`, outside the transaction: false when another node already used this key. */
    claimAcross: (use: Use): Promise<boolean> =>
      across ? across.claim(t.table, JSON.stringify(t.key.map((c) => use[c]))) : Promise.resolve(true),
  };
}
