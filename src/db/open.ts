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

type Statement = ReturnType<Db['prepare']>;
type Method = (...args: unknown[]) => unknown;

/** Calls that run the statement: each prepares it first, then is the statement's own method, bound. */
const CALLS = ['run', 'get', 'all', 'iterate', 'columns', 'bind'] as const;
/** Mode switches (`.pluck()` at construction): recorded, and applied when the statement is prepared. */
const MODES = ['pluck', 'expand', 'raw', 'safeIntegers'] as const;
const PROPERTIES = ['reader', 'readonly', 'source', 'busy', 'database'] as const;

/**
 * Preparing serve's ~100 statements cost milliseconds of every start (docs/performance.md); a stand-in prepares at
 * first call and then is the statement's bound methods. `warm()` prepares the rest, so bad SQL still stops the start.
 */
export function prepareOnFirstUse(db: Db, batch = 8): { end(): void; warm(): Promise<void> } {
  const prepare = db.prepare;
  const pending = new Set<() => Statement>();
  db.prepare = ((source: string) => {
    const modes: [(typeof MODES)[number], unknown[]][] = [];
    const stand: Record<string, unknown> = {};
    let statement: Statement | undefined;
    const real = (): Statement => {
      if (statement) return statement;
      const s = prepare.call(db, source) as Statement;
      for (const [mode, args] of modes) (s[mode] as Method)(...args);
      for (const k of CALLS) stand[k] = (s[k] as Method).bind(s);
      pending.delete(real);
      statement = s;
      return s;
    };
    for (const k of CALLS) stand[k] = (...args: unknown[]) => (real()[k] as Method)(...args);
    for (const k of MODES)
      stand[k] = (...args: unknown[]) => {
        if (statement) (statement[k] as Method)(...args);
        else modes.push([k, args]);
        return stand;
      };
    for (const k of PROPERTIES) Object.defineProperty(stand, k, { get: () => real()[k], enumerable: true });
    pending.add(real);
    return stand as unknown as Statement;
  }) as Db['prepare'];
  return {
    end: () => {
      db.prepare = prepare;
    },
    warm: async () => {
      while (pending.size > 0 && db.open) {
        let n = 0;
        for (const real of pending) {
          real();
          if (++n === batch) break;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
