import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { startReplication } from '../../src/replication/supervisor.ts';
import { LITESTREAM } from '../chaos/replica-drill.ts';
import { descendants } from '../chaos/machine-loss.ts';

/** Live processes under `pid` whose executable is `name` (/proc/<pid>/comm). */
export function processesUnder(pid: number, name: string): number[] {
  return descendants(pid).filter((c) => {
    try {
      return readFileSync(`/proc/${c}/comm`, 'utf8').trim() === name;
    } catch {
      return false;
    }
  });
}

export async function until(what: string, ok: () => boolean, ms = 40_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function walSalt(path: string): string | null {
  try {
    return readFileSync(path).subarray(16, 24).toString('hex');
  } catch {
    return null;
  }
}

/** A replica with one generation: a database written under a supervised Litestream, then stopped. */
export async function replicaWithData(root: string): Promise<{ replica: string; before: string }> {
  const replica = join(root, 'replica');
  const src = join(root, 'src');
  const db = openDb(join(src, 'isocast.db'));
  const rep = startReplication({
    bin: LITESTREAM,
    dataDir: src,
    dbPath: join(src, 'isocast.db'),
    settings: { REPLICA_URL: replica, REPLICA_SYNC_INTERVAL_MS: 500 },
    db,
    logger: memoryLogger(),
  });
  await until('the first upload', () => rep.status().lastSyncAt !== null);
  const before = new Date(Date.now() - 3_600_000).toISOString();
  rep.detach();
  db.close();
  await rep.stop();
  return { replica, before };
}
