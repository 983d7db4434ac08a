import { existsSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { openReadOnly } from '../db/open.ts';
import { schemaVersion } from '../db/migrate.ts';
import { lockDataDir, secureDataDir, StartRefused } from '../db/files.ts';
import { nativeSqliteBinding } from '../db/native-binding.ts';
import { litestreamBinary } from './binary.ts';
import { describeReplica, type ReplicationInput } from './settings.ts';
import { runLitestream, writeLitestreamConfig } from './supervisor.ts';

/** Never without the server secret (a ledger under a new one rejects every receipt); exit 0, 1 refused, 2 usage. */
export const RESTORE_USAGE = 'usage: isocast restore [--timestamp 2026-11-26T12:00:00Z] [flags]';

function parseTimestamp(raw: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(raw)) return null;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

export function restoreArgs(argv: string[]): { timestamp?: string; rest: string[]; problem?: string } {
  const rest: string[] = [];
  let timestamp: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const inline = a.startsWith('--timestamp=') ? a.slice('--timestamp='.length) : undefined;
    if (a !== '--timestamp' && inline === undefined) {
      rest.push(a);
      continue;
    }
    const raw = inline ?? argv[++i];
    const t = raw === undefined ? null : parseTimestamp(raw);
    if (t === null) return { rest, problem: `--timestamp: ${raw ?? '(missing)'} is not an ISO 8601 time with a zone` };
    timestamp = t;
  }
  return { timestamp, rest };
}

export async function restoreDatabase(
  config: ReplicationInput & { DATA_DIR: string; SERVER_SECRET?: string | undefined },
  { dbPath, timestamp }: { dbPath: string; timestamp: string | undefined },
) {
  const say = (line: string) => process.stderr.write(`${line}\n`);
  if (!config.REPLICA_URL) {
    say('isocast restore: REPLICA_URL is not set: there is no replica to restore from');
    return 2;
  }
  const bin = litestreamBinary(config);
  if ('problem' in bin) {
    say(`isocast restore: ${bin.problem}`);
    return 2;
  }
  const dir = config.DATA_DIR;
  secureDataDir(dir);
  // Held, so no server starts on a half-restored directory.
  let hold: { release(): void };
  try {
    hold = lockDataDir(dir, nativeSqliteBinding());
  } catch (err) {
    if (!(err instanceof StartRefused)) throw err;
    say(`isocast restore: refused: ${err.message}`);
    return 1;
  }
  try {
    const present = ['', '-wal', '-shm'].map((s) => dbPath + s).filter((p) => existsSync(p));
    if (present.length > 0) {
      say(
        `isocast restore: refused: ${present.join(', ')} exists; restore only writes into an empty DATA_DIR (move the old files away first)`,
      );
      return 1;
    }
    if (!config.SERVER_SECRET && !existsSync(join(dir, 'server-secret'))) {
      say(
        `isocast restore: refused: no server secret. The secret is not in the replica; copy your saved server-secret into ${dir} (or set SERVER_SECRET / SERVER_SECRET_FILE) first, or every receipt buyers hold stops working`,
      );
      return 1;
    }
    const configPath = writeLitestreamConfig(dir, dbPath, config);
    const args = ['restore', '-config', configPath, '-no-expand-env'];
    if (timestamp) args.push('-timestamp', timestamp);
    args.push(dbPath);
    const started = performance.now();
    // Litestream's local state for a database that is gone would confuse its next start.
    rmSync(join(dir, `.${basename(dbPath)}-litestream`), { recursive: true, force: true });
    // Litestream's JSON lines go to stderr as they are; they are kept to recognise its refusals.
    const { code, stdout, stderr } = await runLitestream(bin.path, args, { onLine: say });
    // Litestream restores into <db>.tmp and renames it; SQLite leaves the temporary's -wal/-shm.
    for (const s of ['-wal', '-shm']) rmSync(`${dbPath}.tmp${s}`, { force: true });
    if (code !== 0) {
      rmSync(`${dbPath}.tmp`, { force: true });
      const none = [...stdout, ...stderr].some((l) =>
        /no matching backups|no generations|no snapshots available/i.test(l),
      );
      say(
        none
          ? `isocast restore: the replica (${describeReplica(config)}) holds no backup of this database${timestamp ? ` at or before ${timestamp}` : ''}`
          : `isocast restore: litestream restore failed (exit ${code})`,
      );
      return 1;
    }
    const db = openReadOnly(dbPath, { nativeBinding: nativeSqliteBinding() });
    try {
      const check = db.pragma('quick_check', { simple: true });
      const payments = db.prepare("SELECT count(*) FROM payments WHERE status = 'applied'").pluck().get() as number;
      const signals = db.prepare('SELECT count(*) FROM signals').pluck().get() as number;
      process.stdout.write(
        `restored ${dbPath} from ${describeReplica(config)}${timestamp ? ` as of ${timestamp}` : ''} in ${((performance.now() - started) / 1000).toFixed(1)} s: quick_check ${String(check)}, schema v${schemaVersion(db)}, ${payments} applied payments, ${signals} signals\n`,
      );
      return check === 'ok' ? 0 : 1;
    } finally {
      db.close();
    }
  } finally {
    hold.release();
  }
}
