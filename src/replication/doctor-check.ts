import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { litestreamBinary } from './binary.ts';
import { describeReplica, type ReplicationInput } from './settings.ts';
import { runLitestream, writeLitestreamConfig } from './supervisor.ts';

/** From `litestream generations` on the replica itself, serve running or not; reads only. */
type ReplicaCheck = { status: 'ok' | 'warn' | 'fail'; detail: string };

/** A replica behind the database by more than this is a warning. */
const LAG_WARN_S = 60;
const TIMEOUT_MS = 15_000;

/** Go's time.Duration text (1h2m3.5s, 250ms, 0s) in seconds. */
export function goDurationSeconds(text: string): number | null {
  // Go writes microseconds as U+00B5; escaped, because the binary's bundle must stay ASCII.
  const re = /(-?\d+(?:\.\d+)?)(h|ms|\u00b5s|us|ns|m|s)/g;
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, '\u00b5s': 1e-6, us: 1e-6, ns: 1e-9 };
  let total = 0;
  let matched = '';
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * unit[m[2]!]!;
    matched += m[0];
  }
  return matched === text && text !== '' ? total : null;
}

/** The newest generation of `litestream generations` output (rows: name, generation, lag, start, end). */
export function interpretGenerations(output: string, nowMs: number): ReplicaCheck {
  // By their end time, not position: Litestream may print a line before its header.
  const rows = output
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length === 5 && Number.isFinite(Date.parse(f[4]!)));
  if (rows.length === 0) return { status: 'fail', detail: 'the replica holds no backup of this database yet' };
  rows.sort((a, b) => Date.parse(a[4]!) - Date.parse(b[4]!));
  const [, generation, lagText, , end] = rows[rows.length - 1]!;
  const lagSeconds = goDurationSeconds(lagText!);
  const ago = Math.max(0, Math.round((nowMs - Date.parse(end!)) / 1000));
  const lag = lagSeconds === null ? 'unknown' : `${Math.max(0, lagSeconds).toFixed(1)} s`;
  const detail = `generation ${generation}, last sync ${end} (${ago} s ago), lag ${lag}`;
  return { status: lagSeconds !== null && lagSeconds <= LAG_WARN_S ? 'ok' : 'warn', detail };
}

export async function replicaCheck(config: ReplicationInput, dbPath: string): Promise<ReplicaCheck> {
  if (!config.REPLICA_URL)
    return {
      status: 'warn',
      detail: 'off (REPLICA_URL unset): the ledger lives on this disk and in the last `isocast backup` only',
    };
  const where = describeReplica(config);
  const bin = litestreamBinary(config);
  if ('problem' in bin) return { status: 'fail', detail: `${where}: ${bin.problem}` };
  const dir = mkdtempSync(join(tmpdir(), 'isocast-doctor-'));
  try {
    const configPath = writeLitestreamConfig(dir, dbPath, config);
    const args = ['generations', '-config', configPath, '-no-expand-env', dbPath];
    const out = await runLitestream(bin.path, args, { timeoutMs: TIMEOUT_MS });
    const error = out.code === 0 ? '' : out.stderr.join('\n').trim().split('\n').pop();
    if (error) return { status: 'fail', detail: `${where}: litestream generations failed: ${error}` };
    const r = interpretGenerations(out.stdout.join('\n'), Date.now());
    return { status: r.status, detail: `${where}: ${r.detail}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
