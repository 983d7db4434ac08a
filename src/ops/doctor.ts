import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import type { Config } from '../config.ts';
import { payTo } from '../payments/pay-to.ts';
import { SCHEMA_VERSION, schemaVersion } from '../db/migrate.ts';
import { httpRequest } from '../lib/http-client.ts';
import { loadSanctionsList } from '../sanctions/list.ts';
import { discoveryCheck, resolutionCheck } from '../resolution/store.ts';
import { FALLBACK_KIND, describeKind, type SupportedResult } from '../payments/settlers/negotiate.ts';
import { replicaCheck } from '../replication/doctor-check.ts';
import type { FailoverSettler } from '../payments/settlers/failover.ts';
import { redactUrl } from '../lib/url-credentials.ts';
import { hostPort } from './safety.ts';
import { SECRET_NAMES } from '../lib/secrets.ts';
import type { Db } from '../db/open.ts';

/** Upstream checks only ask whether the host answers HTTP (no API quota spent, no money moved); output is redacted. */

export async function runDoctor(deps: DoctorDeps): Promise<Check[]> {
  const checks: Check[] = [];
  for (const check of [
    configChecks,
    databaseChecks,
    async () => [{ name: 'replica', ...(await replicaCheck(deps.config, deps.dbPath)) }],
    clusterChecks,
    sanctionsChecks,
    upstreamChecks,
    facilitatorChecks,
    rpcChecks,
  ])
    checks.push(...(await check(deps)));
  return checks.map((c) => ({ ...c, detail: redact(c.detail, deps.config) }));
}

/** URLs lose credentials and key-like parts; any configured secret value that still appears becomes ***. */
function redact(text: string, config: Partial<Record<string, unknown>>): string {
  let out = text.replace(/https?:\/\/[^\s,;)]+/g, (u) => redactUrl(u));
  for (const name of SECRET_NAMES) {
    const v = config[name];
    if (typeof v === 'string' && v.length >= 4) out = out.split(v).join('***');
  }
  return out;
}

export function formatReport(checks: Check[]): string {
  const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
  const width = Math.max(...checks.map((c) => c.name.length));
  const indent = ' '.repeat(width + 9);
  const lines = checks.map(
    (c) => `[${mark[c.status]}] ${c.name.padEnd(width)}  ${c.detail.split('\n').join(`\n${indent}`)}`,
  );
  const failed = checks.filter((c) => c.status === 'fail').length;
  lines.push('', failed ? `${failed} check(s) failed` : 'all required checks passed');
  return lines.join('\n') + '\n';
}

type Check = { name: string } & Awaited<ReturnType<typeof replicaCheck>>;

type DoctorDeps = {
  config: Config;
  /** Read-only, so a database older than the binary is reported, never migrated; called only when the file exists. */
  openDb(): Db;
  dbPath: string;
};

const TIMEOUT_MS = 5_000;

const line = (name: string, status: Check['status'], detail: string): Check => ({ name, status, detail });

function configChecks({ config }: DoctorDeps): Check[] {
  const wallet = `${payTo(config)}`;
  const listens = `serve listens on ${hostPort(config.HOST, config.PORT)} (HOST, PORT)`;
  return [
    line('config', 'ok', `payment mode ${config.PAYMENT_MODE}, feed ${config.FEED}, ${listens}`),
    config.PAYMENT_MODE === 'live'
      ? line('settlement wallet', 'ok', wallet)
      : line('settlement wallet', 'warn', `mock mode: payments are simulated (payTo ${wallet})`),
  ];
}

function databaseChecks({ dbPath, openDb }: DoctorDeps): Check[] {
  if (!existsSync(dbPath))
    return [line('database', 'warn', `${dbPath} does not exist yet; serve or migrate creates it`)];
  try {
    const db = openDb();
    try {
      const integrity = db.pragma('quick_check', { simple: true });
      const version = schemaVersion(db);
      const mode = db.pragma('journal_mode', { simple: true });
      const detail = `${dbPath}: quick_check ${String(integrity)}, schema v${version}/${SCHEMA_VERSION}, journal ${String(mode)}`;
      if (integrity !== 'ok' || mode !== 'wal' || version > SCHEMA_VERSION)
        return [line('database', 'fail', `${detail}${version > SCHEMA_VERSION ? ' (newer than this binary)' : ''}`)];
      if (version < SCHEMA_VERSION)
        return [
          line(
            'database',
            'warn',
            `${detail}: older than this binary, not migrated; back it up (isocast backup <file>), then run isocast migrate`,
          ),
        ];
      return [
        line('database', 'ok', detail),
        { name: 'resolution rules', ...resolutionCheck(db, Date.now()) },
        { name: 'discovered events', ...discoveryCheck(db) },
      ];
    } finally {
      db.close();
    }
  } catch (err) {
    return [line('database', 'fail', `${dbPath}: ${(err as Error).message}`)];
  }
}

/** A reader without NATS cannot serve (fail); a primary without it still sells (warning). */
async function clusterChecks({ config, dbPath, openDb }: DoctorDeps): Promise<Check[]> {
  if (!config.NATS_URL) return [line('read nodes', 'ok', 'single node (NATS_URL unset)')];
  const { hostname: host, port: given } = new URL(config.NATS_URL);
  const port = Number(given || 4222);
  const reachable = await tcpReachable(host, port);
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
  return [line('read nodes', reachable ? 'ok' : config.ROLE === 'reader' ? 'fail' : 'warn', detail)];
}

function tcpReachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(TIMEOUT_MS, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

function sanctionsChecks({ config }: DoctorDeps): Check[] {
  const list = loadSanctionsList({ path: config.OFAC_LIST_PATH, extra: config.OFAC_EXTRA });
  const st = list.status();
  const missing = config.OFAC_REQUIRED ? 'fail' : 'warn';
  const [status, detail]: [Check['status'], string] =
    list.loadError && /holds no addresses/.test(list.loadError)
      ? ['fail', `${list.loadError}; nothing would be screened`]
      : list.loadError
        ? [missing, `${list.loadError}${config.OFAC_REQUIRED ? '; paid routes will answer 503' : ''}`]
        : !st.listLoaded
          ? [
              missing,
              `no OFAC_LIST_PATH; ${config.OFAC_REQUIRED ? 'paid routes will answer 503' : 'screening uses OFAC_EXTRA only'} (${st.count} addresses)`,
            ]
          : [
              'ok',
              `${st.count} addresses loaded${st.extraConfigured ? ' (with OFAC_EXTRA)' : ''}, file modified ${st.ageSeconds} s ago`,
            ];
  return [line('sanctions list', status, detail)];
}

/** Each upstream probed at once; lines in the order the answers come. */
async function upstreamChecks({ config }: DoctorDeps): Promise<Check[]> {
  const upstreams: [string, string | undefined, boolean][] = [
    ['market (gamma)', config.GAMMA_URL, config.FEED === 'live'],
    ['odds (clob)', config.CLOB_URL, config.FEED === 'live'],
    ['weather (metar)', config.METAR_URL, config.FEED === 'live' && config.WEATHER_SOURCE === 'metar'],
    ['weather (weather.com)', config.WEATHER_URL, config.FEED === 'live' && config.WEATHER_SOURCE === 'wu'],
    // In use, the facilitator is checked through its /supported below.
    ['facilitator', facilitatorInUse(config) ? undefined : config.FACILITATOR_URL, false],
    ['messenger', config.MESSENGER_BOT_TOKEN ? config.MESSENGER_API_URL : undefined, true],
  ];
  const lines: Check[] = [];
  await Promise.all(
    upstreams.map(async ([name, url, needed]) => {
      if (!url) {
        if (name === 'messenger') lines.push(line(name, 'warn', 'MESSENGER_BOT_TOKEN unset: chat delivery is off'));
        return;
      }
      if (!needed) {
        lines.push(line(name, 'ok', `${url} (not used in this mode; not probed)`));
        return;
      }
      try {
        const { status } = await httpRequest({ upstream: 'doctor', url, timeoutMs: TIMEOUT_MS });
        lines.push(line(name, status < 500 ? 'ok' : 'warn', `${url} answered HTTP ${status}`));
      } catch (err) {
        lines.push(line(name, 'fail', `${url} unreachable: ${(err as Error).message}`));
      }
    }),
  );
  return lines;
}

async function facilitatorChecks({ config }: DoctorDeps): Promise<Check[]> {
  if (!facilitatorInUse(config)) return [];
  const { settlerFromConfig } = await import('../payments/settlers/from-config.ts');
  const settler = settlerFromConfig(config) as FailoverSettler;
  const each = await settler
    .supportedEach()
    .catch((err: Error) => err)
    .finally(() => settler.close?.());
  if (each instanceof Error)
    return [line('facilitator', 'fail', `${redactUrl(config.FACILITATOR_URL!)} unusable: ${each.message}`)];
  // One line each: a payment skips one that is down for the next (payments/settlers/failover.ts).
  const auth = config.CDP_API_KEY_ID ? ' (CDP JWT auth)' : '';
  return each.map(({ name, result }, i) =>
    line(
      each.length > 1 ? `facilitator ${i + 1}` : 'facilitator',
      ...facilitatorCheck(`${name}${auth}`, result, each.length - 1),
    ),
  );
}

/** In-doubt settlements are resolved through the token contract on RPC_URL: it must answer JSON-RPC for Base. */
async function rpcChecks({ config }: DoctorDeps): Promise<Check[]> {
  if (config.PAYMENT_MODE !== 'live')
    return config.RPC_URL ? [line('rpc', 'ok', `${config.RPC_URL} (not used in mock mode; not probed)`)] : [];
  const body = { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] };
  const id = await httpRequest({ upstream: 'rpc', url: config.RPC_URL!, method: 'POST', body, timeoutMs: TIMEOUT_MS })
    .then((res) => {
      const result = (res.json as { result?: unknown } | undefined)?.result;
      if (typeof result !== 'string' || !/^0x[0-9a-fA-F]+$/.test(result))
        throw new Error(`HTTP ${res.status} without a JSON-RPC chain id`);
      return Number.parseInt(result.slice(2), 16);
    })
    .catch((err: Error) => err);
  if (id instanceof Error)
    return [line('rpc', 'fail', `${config.RPC_URL} unusable: ${id.message}; in-doubt settlements cannot be resolved`)];
  const base = id === 8453;
  return [
    line(
      'rpc',
      base ? 'ok' : 'fail',
      `${config.RPC_URL} eth_chainId ${id}${base ? ' (Base)' : '; expected 8453 (Base)'}`,
    ),
  ];
}

const facilitatorInUse = (c: Config) =>
  c.PAYMENT_MODE === 'live' && c.SETTLEMENT === 'facilitator' && !!c.FACILITATOR_URL;

/** /supported decides what is sent (v2 `eip155:8453` or v1 `base`); without a list, v1 is sent on trust: a warning. */
function facilitatorCheck(who: string, r: SupportedResult, others: number): [Check['status'], string] {
  if (r.ok) return ['ok', `${who} sends ${describeKind(r.kind)} (lists ${r.listed.join(', ')})`];
  if (r.problem === 'none')
    return [
      'fail',
      `${who} ${r.detail}; ${others === 0 ? 'serve refuses to start' : 'payments skip it (serve refuses to start only when every one does)'}`,
    ];
  const down = / failed: /.test(r.detail);
  return [
    down ? 'fail' : 'warn',
    `${who} ${r.detail}${down ? '' : `; ${describeKind(FALLBACK_KIND)} will be sent until it lists kinds`}`,
  ];
}
