import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import type { Db } from '../db/open.ts';
import type { ClusterSettings } from './start.ts';

/** A reader without NATS cannot serve (fail); a primary without it still sells (warning). */
type DoctorInput = { config: ClusterSettings; dbPath: string; openDb(): Db; timeoutMs: number };

export async function clusterCheck({ config, dbPath, openDb, timeoutMs }: DoctorInput) {
  if (!config.NATS_URL) return { status: 'ok' as const, detail: 'single node (NATS_URL unset)' };
  const { hostname: host, port: given } = new URL(config.NATS_URL);
  const port = Number(given || 4222);
  const reachable = await tcpReachable(host, port, timeoutMs);
  let state = 'no database yet';
  if (existsSync(dbPath)) {
    const d = openDb();
    try {
      const row = d.prepare('SELECT recording, applied_seq FROM replication_state WHERE id = 1').get() as
        | { recording: number; applied_seq: number }
        | undefined;
      const backlog = d.prepare('SELECT count(*) FROM replication_outbox').pluck().get() as number;
      state =
        config.ROLE === 'reader'
          ? `applied stream seq ${row?.applied_seq ?? 0}`
          : `${backlog} change(s) not yet published${row?.recording === 1 ? '' : ', recording starts at the next serve'}`;
    } catch {
      state = 'schema older than read nodes (serve migrates it)';
    } finally {
      d.close();
    }
  }
  const nats = `NATS ${host}:${port} ${reachable ? 'reachable' : 'unreachable'}`;
  const detail = `${config.ROLE}; ${nats}; ${state}${config.ROLE === 'reader' ? `; primary ${config.PRIMARY_URL}` : ''}`;
  if (config.ROLE === 'reader' && !reachable) return { status: 'fail' as const, detail };
  return { status: reachable ? ('ok' as const) : ('warn' as const), detail };
}

function tcpReachable(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}
