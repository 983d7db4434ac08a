import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/**
 * What `serve` must own alone, checked before it creates anything: the listen address (bound once)
 * and the data directory (a lock held for the life of the process, which the OS releases however
 * it dies). Both refuse with one line and the fix; main.ts exits 2.
 */
export class StartRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartRefused';
  }
}

const SERVE_LOCK_FILE = 'isocast-serve.lock';

export function addressInUse(host: string, port: number): string {
  return (
    `${host}:${port} is already in use (another isocast, or another program: \`ss -ltnp 'sport = :${port}'\` shows which); ` +
    `stop it or choose another port with PORT=<n> or --port <n>`
  );
}

export function probePort(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new StartRefused(addressInUse(host, port)));
      else if (err.code === 'EACCES')
        reject(
          new StartRefused(`${host}:${port}: permission denied (ports below 1024 need privileges); use PORT=8402`),
        );
      else if (err.code === 'EADDRNOTAVAIL')
        reject(new StartRefused(`HOST ${host} is not an address of this machine; use HOST=127.0.0.1 or 0.0.0.0`));
      else reject(err);
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

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
    if (
      (err as { code?: string }).code?.startsWith('SQLITE_BUSY') ||
      (err as { code?: string }).code === 'SQLITE_LOCKED'
    )
      throw new StartRefused(
        `DATA_DIR ${dir} is in use by another running isocast server; stop it first, or give this one its own DATA_DIR=<dir>`,
      );
    throw err;
  }
  return { release: () => db.close() };
}
