import type Database from 'better-sqlite3';
import { readAssetText } from '../lib/assets.ts';

/** user_version is written inside each migration's transaction, so a crash leaves a whole version. */
export const MIGRATIONS: readonly string[] = [
  '0001_foundation.sql',
  '0002_payments.sql',
  '0003_delivery.sql',
  '0004_signal_engine.sql',
  '0005_operations.sql',
  '0006_payment_trust.sql',
  '0007_retention.sql',
  '0008_resolution_rules.sql',
  '0009_report_time.sql',
  '0010_rule_kind.sql',
  '0011_salt_steps.sql',
  '0012_chat_ids.sql',
  '0013_discovered_events.sql',
  '0014_receipt_revocation.sql',
  '0015_payment_identifier.sql',
  '0016_siwx_nonces.sql',
  '0017_payment_identifier_keyed.sql',
  '0019_signal_provenance.sql',
  '0020_read_nodes.sql',
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

export function migrate(
  db: Database.Database,
  opts: { target?: number; fromSchemaFile?: boolean } = {},
): { from: number; to: number } {
  const target = opts.target ?? SCHEMA_VERSION;
  const from = schemaVersion(db);
  if (from > SCHEMA_VERSION)
    throw new Error(`database schema version ${from} is newer than this build (${SCHEMA_VERSION}); upgrade isocast`);
  if (from === 0 && target === SCHEMA_VERSION && opts.fromSchemaFile !== false && isEmpty(db)) {
    const sql = readAssetText('schema.sql');
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    })();
    return { from, to: SCHEMA_VERSION };
  }
  // A table rebuild (SQLite cannot alter a CHECK) runs with foreign keys off, as SQLite documents,
  // and checks them before the commit, so a migration that would orphan a row rolls back whole.
  const fk = db.pragma('foreign_keys', { simple: true }) === 1;
  if (fk) db.pragma('foreign_keys = OFF');
  try {
    for (let v = from + 1; v <= target; v++) {
      const sql = readAssetText(`migrations/${MIGRATIONS[v - 1]}`);
      db.transaction(() => {
        db.exec(sql);
        const broken = db.pragma('foreign_key_check') as unknown[];
        if (broken.length > 0)
          throw new Error(`migration ${MIGRATIONS[v - 1]} leaves ${broken.length} foreign key violations`);
        db.pragma(`user_version = ${v}`);
      })();
    }
  } finally {
    if (fk) db.pragma('foreign_keys = ON');
  }
  return { from, to: Math.max(from, target) };
}

function isEmpty(db: Database.Database): boolean {
  return db.prepare("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").pluck().get() === 0;
}
