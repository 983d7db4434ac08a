import { existsSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Db } from '../db/open.ts';

/** SQLite's online backup to `dest.partial`, renamed once integrity_check passes: no half-written file has the name. */
export async function backupDatabase(
  db: Db,
  dest: string,
  opts: { nativeBinding?: object } = {},
): Promise<{ pages: number; integrity: 'ok' }> {
  if (existsSync(dest)) throw new Error(`${dest} already exists; choose a new file name`);
  const partial = `${dest}.partial`;
  rmSync(partial, { force: true });
  try {
    const result = await db.backup(partial, { progress: () => 256 });
    const copy = new Database(
      partial,
      opts.nativeBinding ? { nativeBinding: opts.nativeBinding as unknown as string } : {},
    );
    try {
      const check = copy.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new Error(`backup failed integrity check: ${String(check)}`);
      // A single-file copy is easier to move around than a WAL pair.
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    renameSync(partial, dest);
    return { pages: result.totalPages, integrity: 'ok' };
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
}
