import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from './migrate.ts';

export type Db = Database.Database;

/** busy_timeout first: WAL waits while a backup holds the file. synchronous=NORMAL survives a crash, not power loss. */
export function openDb(path: string, opts: { nativeBinding?: string | object; migrate?: boolean } = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, opts.nativeBinding ? { nativeBinding: opts.nativeBinding as string } : {});
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  if (opts.migrate !== false) migrate(db);
  return db;
}

/** An existing database, read-only and unmigrated: for `doctor`, which must change nothing. */
export function openReadOnly(path: string, opts: { nativeBinding?: string | object } = {}): Db {
  // better-sqlite3 loads its own addon for an undefined nativeBinding, as for none.
  return new Database(path, { readonly: true, fileMustExist: true, nativeBinding: opts.nativeBinding as string });
}
