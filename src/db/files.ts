import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
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
