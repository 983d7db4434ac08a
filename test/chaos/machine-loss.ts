import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerProcess } from './server.ts';

/** A machine dying under a drill (replica-drill.ts, test/replication): its processes, and what its replica held. */

/** Live (not zombie) processes under `pid`, parents before children, from /proc. */
export function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2);
      if (!fields.startsWith('Z')) parent.set(Number(d), Number(fields.split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [c, pp] of parent) {
      if (pp !== p) continue;
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** Everything at once, children first: nobody gets to run a shutdown path. */
export async function killTree(server: ServerProcess): Promise<void> {
  const kids = descendants(server.pid);
  for (const k of kids.reverse()) {
    try {
      process.kill(k, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  await server.kill('SIGKILL');
}

export function walSalt(path: string): string | null {
  try {
    return readFileSync(path).subarray(16, 24).toString('hex');
  } catch {
    return null;
  }
}

/**
 * How far a Litestream file replica had got when the machine died, read from the replica alone,
 * so a drill can tell the replication lag (commits the replica never received: the RPO) from a
 * loss (a commit it had received and the restore lacks).
 *
 * Litestream 0.3 writes each snapshot and WAL segment as `<name>.tmp` and renames it into place
 * (the rename sets the file's ctime), one sync pass after another, and each pass's read of its
 * shadow WAL starts after the previous pass's last rename; the shadow WAL takes every commit at its
 * next check (monitor-interval, 100 ms). So a commit made before the end of the third-newest pass
 * was read into one of the two passes after it: `heldUntil`. A commit after that instant may or
 * may not be on the replica, and how far back that reaches is the lag of the moment: about a
 * second on a quiet machine, several on a saturated one (docs/operations.md, Durability).
 */
export type ReplicaPosition = {
  /** The newest generation's files, oldest first: `generations/<id>/wal/<index>_<offset>.wal.lz4`. */
  files: { name: string; atMs: number }[];
  /** Every commit before this instant (ms) is on the replica; -Infinity with fewer than three sync passes. */
  heldUntil: number;
};

export function replicaPosition(dir: string): ReplicaPosition {
  const all: { name: string; atMs: number }[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!e.name.endsWith('.tmp')) all.push({ name: p.slice(dir.length + 1), atMs: statSync(p).ctimeMs });
    }
  };
  if (existsSync(dir)) walk(dir);
  all.sort((a, b) => a.atMs - b.atMs);
  // A restore reads the newest generation only (a Litestream restart or a restored start begins one).
  const generation = all.at(-1)?.name.split('/')[1];
  const files = all.filter((f) => f.name.split('/')[1] === generation);
  // Files renamed within BURST_MS of the one before came from one read of the shadow WAL (at a WAL
  // restart Litestream writes the old index's tail and the new index's head together: three files
  // in 9 ms in one CI run), so the rule counts sync passes, not files.
  const passEnds: number[] = [];
  files.forEach((f, i) => {
    if (i > 0 && f.atMs - files[i - 1]!.atMs <= BURST_MS) passEnds[passEnds.length - 1] = f.atMs;
    else passEnds.push(f.atMs);
  });
  return { files, heldUntil: passEnds.length >= 3 ? passEnds.at(-3)! : Number.NEGATIVE_INFINITY };
}

// A third of the 900 ms sync interval: two real passes taken as one only makes `heldUntil` earlier.
const BURST_MS = 300;

/** One line: the replica's last files, as "<name> <ms> ms before <what>". */
export function describePosition(p: ReplicaPosition, atMs: number, what: string): string {
  if (p.files.length === 0) return 'replica empty';
  const last = p.files.slice(-3).map((f) => `${f.name.split('/').slice(2).join('/')} ${Math.round(atMs - f.atMs)} ms`);
  return `replica ${p.files.at(-1)!.name.split('/')[1]}: ${p.files.length} files, the last three written ${last.join(', ')} before ${what}`;
}
