import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** `serve` must own its address and DATA_DIR alone: a refusal is one line with the fix; main.ts exits 2. */
export class StartRefused extends Error {
  override name = 'StartRefused';
}

const SERVE_LOCK_FILE = 'isocast-serve.lock';

/** An exclusive SQLite lock: it works wherever the database does. `backup`, `doctor` and `migrate` do not take it. */
export function lockDataDir(dir: string, nativeBinding?: string | object): { release(): void } {
  const path = join(dir, SERVE_LOCK_FILE);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const db = new Database(path, nativeBinding ? { nativeBinding: nativeBinding as string } : {});
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = MEMORY');
    // The first write takes the exclusive lock; in EXCLUSIVE mode it is kept until close.
    db.exec('CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL)');
    db.prepare('INSERT OR REPLACE INTO holder (id, pid) VALUES (1, ?)').run(process.pid);
  } catch (err) {
    db.close();
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_BUSY') || code === 'SQLITE_LOCKED')
      throw new StartRefused(
        `DATA_DIR ${dir} is in use by another running isocast server; stop it first, or give this one its own DATA_DIR=<dir>`,
      );
    throw err;
  }
  return { release: () => db.close() };
}
