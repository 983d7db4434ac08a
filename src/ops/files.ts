import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The database, its WAL and SHM, the server secret and backups hold payments and keys: only the
 * service user may read them, whether or not systemd's UMask=0077 applies (a shell, a container,
 * cron). The process sets the umask itself, before it creates any file.
 */
export const PRIVATE_UMASK = 0o077;
export const DATA_FILES = ['isocast.db', 'isocast.db-wal', 'isocast.db-shm', 'server-secret'];

export function usePrivateUmask(): void {
  process.umask(PRIVATE_UMASK);
}

/**
 * Creates DATA_DIR 0700, and tightens one an older version left 0755 with 0644 files. SQLite gives
 * the WAL and SHM the database file's mode, so the database is fixed before it is opened. A
 * directory that holds none of our files is left as it is: it may be a shared parent.
 */
export function secureDataDir(dir: string): void {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return;
  }
  const ours = DATA_FILES.filter((f) => existsSync(join(dir, f)));
  if (ours.length === 0) return;
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  for (const f of ours) {
    const path = join(dir, f);
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
}
