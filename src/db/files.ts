import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DATA_FILES = ['isocast.db', 'isocast.db-wal', 'isocast.db-shm', 'server-secret'];

/** Litestream's `.isocast.db-litestream` and `lost+found` too; any other entry means a shared parent. */
const isOurs = (name: string) =>
  DATA_FILES.includes(name) || name.startsWith('isocast') || name.startsWith('.isocast') || name === 'lost+found';

/** DATA_DIR 0700 before the database opens (the WAL and SHM take its mode); in a shared parent, our files 0600. */
export function secureDataDir(dir: string): void {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return;
  }
  const entries = readdirSync(dir);
  if (entries.every(isOurs) && (statSync(dir).mode & 0o077) !== 0) {
    try {
      chmodSync(dir, 0o700);
    } catch (err) {
      // Owned by another user: we cannot tighten it, and must not put payments in it as it is.
      throw new Error(
        `DATA_DIR ${dir} is readable or writable by other users and cannot be made private ` +
          `(${(err as NodeJS.ErrnoException).code ?? String(err)}); chown it to the service user or chmod 700 it`,
      );
    }
  }
  for (const f of DATA_FILES) {
    const path = join(dir, f);
    if (existsSync(path) && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
}

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

/** Unset SERVER_SECRET is generated once into DATA_DIR; `wx` makes two racing first starts agree on one file. */
export function loadOrCreateSecret(dataDir: string, configured?: string): Buffer {
  if (configured) return Buffer.from(configured.replace(/^0x/, ''), 'hex');
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'server-secret');
  if (!existsSync(path)) {
    try {
      writeFileSync(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  chmodSync(path, 0o600);
  const hex = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-fA-F]{64,}$/.test(hex)) throw new Error(`${path} does not hold a hex secret of at least 32 bytes`);
  return Buffer.from(hex, 'hex');
}
