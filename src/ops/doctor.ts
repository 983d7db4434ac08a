import { existsSync } from 'node:fs';
import type { Config } from '../config.ts';
import { payTo } from '../config.ts';
import type { Db } from '../db/open.ts';
import { SCHEMA_VERSION, schemaVersion } from '../db/migrate.ts';
import { httpRequest } from '../lib/http-client.ts';
import { loadSanctionsList } from '../sanctions/list.ts';
import { resolutionCheck } from '../resolution/doctor-check.ts';
import { discoveryCheck } from '../resolution/discovery-store.ts';
import { redactUrl } from '../lib/url-credentials.ts';
import { SECRET_NAMES } from '../lib/secrets.ts';
import { FALLBACK_KIND, describeKind, type SupportedResult } from '../payments/settlers/negotiate.ts';
import { replicaCheck, type ReplicaCheck } from '../replication/doctor-check.ts';

/**
 * `isocast doctor`: one line per check, so an operator sees at a glance what is wrong. Upstream
 * checks only ask whether the host answers HTTP at all (any status counts as reachable): they
 * must not spend an API key's quota or move money. Everything printed is redacted (URL credentials,
 * key-like path segments, secret values), and the database is only read: main.ts passes a
 * read-only opener, so a database older than the binary is reported, never migrated (the upgrade
 * path backs it up first).
 */
export type Check = { name: string; status: 'ok' | 'warn' | 'fail'; detail: string };

export type DoctorDeps = {
  config: Config;
  /** Opens the existing database read-only; called only when the file exists. */
  openDb(): Db;
  dbPath: string;
  timeoutMs?: number;
  probe?: (url: string, timeoutMs: number) => Promise<number>;
  /** The facilitator's GET /supported and the kind chosen from it (a read; moves nothing). */
  facilitatorSupported?: (config: Config) => Promise<SupportedResult>;
  /** eth_chainId of RPC_URL (a read; moves nothing). */
  rpcChainId?: (url: string, timeoutMs: number) => Promise<number>;
  /** The replica line (src/replication/doctor-check.ts); tests pass their own. */
  replica?: () => Promise<ReplicaCheck>;
};

async function defaultRpcChainId(url: string, timeoutMs: number): Promise<number> {
  const res = await httpRequest({
    upstream: 'rpc',
    url,
    method: 'POST',
    body: { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
    timeoutMs,
  });
  const result = (res.json as { result?: unknown } | undefined)?.result;
  if (typeof result !== 'string' || !/^0x[0-9a-fA-F]+$/.test(result))
    throw new Error(`HTTP ${res.status} without a JSON-RPC chain id`);
  return Number.parseInt(result.slice(2), 16);
}

async function defaultFacilitatorSupported(config: Config): Promise<SupportedResult> {
  const { settlerFromConfig } = await import('../payments/settlers/from-config.ts');
  const settler = settlerFromConfig(config);
  try {
    return await settler.supported!();
  } finally {
    settler.close?.();
  }
}

async function defaultProbe(url: string, timeoutMs: number): Promise<number> {
  const res = await httpRequest({ upstream: 'doctor', url, timeoutMs });
  return res.status;
}

export async function runDoctor(deps: DoctorDeps): Promise<Check[]> {
  const { config } = deps;
  const checks: Check[] = [];
  const add = (name: string, status: Check['status'], detail: string) => checks.push({ name, status, detail });

  add(
    'config',
    'ok',
    `payment mode ${config.PAYMENT_MODE}, feed ${config.FEED}, listening on ${config.HOST}:${config.PORT}`,
  );
  const wallet = payTo(config);
  add(
    'settlement wallet',
    config.PAYMENT_MODE === 'live' ? 'ok' : 'warn',
    config.PAYMENT_MODE === 'live' ? `${wallet}` : `mock mode: payments are simulated (payTo ${wallet})`,
  );

  try {
    if (!existsSync(deps.dbPath))
      add('database', 'warn', `${deps.dbPath} does not exist yet; serve or migrate creates it`);
    else {
      const db = deps.openDb();
      try {
        const integrity = db.pragma('quick_check', { simple: true });
        const version = schemaVersion(db);
        const mode = db.pragma('journal_mode', { simple: true });
        const detail = `${deps.dbPath}: quick_check ${String(integrity)}, schema v${version}/${SCHEMA_VERSION}, journal ${String(mode)}`;
        if (integrity !== 'ok' || mode !== 'wal' || version > SCHEMA_VERSION) {
          add('database', 'fail', `${detail}${version > SCHEMA_VERSION ? ' (newer than this binary)' : ''}`);
        } else if (version < SCHEMA_VERSION) {
          add(
            'database',
            'warn',
            `${detail}: older than this binary, not migrated; back it up (isocast backup <file>), then run isocast migrate`,
          );
        } else {
          add('database', 'ok', detail);
          const r = resolutionCheck(db, Date.now());
          add('resolution rules', r.status, r.detail);
          const d = discoveryCheck(db);
          add('discovered events', d.status, d.detail);
        }
      } finally {
        db.close();
      }
    }
  } catch (err) {
    add('database', 'fail', `${deps.dbPath}: ${(err as Error).message}`);
  }

  const replica = await (deps.replica ?? (() => replicaCheck(config, deps.dbPath)))();
  add('replica', replica.status, replica.detail);

  const list = loadSanctionsList({ path: config.OFAC_LIST_PATH, extra: config.OFAC_EXTRA });
  const st = list.status();
  if (list.loadError && /holds no addresses/.test(list.loadError))
    add('sanctions list', 'fail', `${list.loadError}; nothing would be screened`);
  else if (list.loadError)
    add(
      'sanctions list',
      config.OFAC_REQUIRED ? 'fail' : 'warn',
      `${list.loadError}${config.OFAC_REQUIRED ? '; paid routes will answer 503' : ''}`,
    );
  else if (!st.listLoaded)
    add(
      'sanctions list',
      config.OFAC_REQUIRED ? 'fail' : 'warn',
      `no OFAC_LIST_PATH; ${config.OFAC_REQUIRED ? 'paid routes will answer 503' : 'screening uses OFAC_EXTRA only'} (${st.count} addresses)`,
    );
  else
    add(
      'sanctions list',
      'ok',
      `${st.count} addresses loaded${st.extraConfigured ? ' (with OFAC_EXTRA)' : ''}, file modified ${st.ageSeconds} s ago`,
    );

  const probe = deps.probe ?? defaultProbe;
  const timeoutMs = deps.timeoutMs ?? 5000;
  const upstreams: [string, string | undefined, boolean][] = [
    ['market (gamma)', config.GAMMA_URL, config.FEED === 'live'],
    ['odds (clob)', config.CLOB_URL, config.FEED === 'live'],
    ['weather (metar)', config.METAR_URL, config.FEED === 'live' && config.WEATHER_SOURCE === 'metar'],
    ['weather (weather.com)', config.WEATHER_URL, config.FEED === 'live' && config.WEATHER_SOURCE === 'wu'],
    // In use, the facilitator is checked through its /supported below.
    ['facilitator', facilitatorInUse(config) ? undefined : config.FACILITATOR_URL, false],
    ['messenger', config.MESSENGER_BOT_TOKEN ? config.MESSENGER_API_URL : undefined, true],
  ];
  await Promise.all(
    upstreams.map(async ([name, url, needed]) => {
      if (!url) {
        if (name === 'messenger') add(name, 'warn', 'MESSENGER_BOT_TOKEN unset: chat delivery is off');
        return;
      }
      if (!needed) {
        add(name, 'ok', `${url} (not used in this mode; not probed)`);
        return;
      }
      try {
        const status = await probe(url, timeoutMs);
        add(name, status < 500 ? 'ok' : 'warn', `${url} answered HTTP ${status}`);
      } catch (err) {
        add(name, 'fail', `${url} unreachable: ${(err as Error).message}`);
      }
    }),
  );
  if (facilitatorInUse(config))
    add('facilitator', ...(await facilitatorCheck(config, deps.facilitatorSupported ?? defaultFacilitatorSupported)));
  // Every settler resolves an in-doubt settlement through the token contract on RPC_URL: it must
  // answer JSON-RPC for Base (8453), not merely HTTP.
  if (config.PAYMENT_MODE === 'live') {
    try {
      const id = await (deps.rpcChainId ?? defaultRpcChainId)(config.RPC_URL!, timeoutMs);
      add(
        'rpc',
        id === 8453 ? 'ok' : 'fail',
        `${config.RPC_URL} eth_chainId ${id}${id === 8453 ? ' (Base)' : '; expected 8453 (Base)'}`,
      );
    } catch (err) {
      add(
        'rpc',
        'fail',
        `${config.RPC_URL} unusable: ${(err as Error).message}; in-doubt settlements cannot be resolved`,
      );
    }
  } else if (config.RPC_URL) add('rpc', 'ok', `${config.RPC_URL} (not used in mock mode; not probed)`);
  return checks.map((c) => ({ ...c, detail: redact(c.detail, config) }));
}

const facilitatorInUse = (c: Config) =>
  c.PAYMENT_MODE === 'live' && c.SETTLEMENT === 'facilitator' && !!c.FACILITATOR_URL;

/**
 * What the facilitator's /supported lists decides what it is sent: v2 `eip155:8453` or v1 `base`.
 * Listing neither fails (serve refuses to start); no list at all (an old facilitator without
 * /supported) warns, since v1 `base` is then sent on trust.
 */
async function facilitatorCheck(
  config: Config,
  supported: (config: Config) => Promise<SupportedResult>,
): Promise<[Check['status'], string]> {
  const url = config.FACILITATOR_URL!;
  const auth = config.CDP_API_KEY_ID ? ' (CDP JWT auth)' : '';
  try {
    const r = await supported(config);
    if (r.ok) return ['ok', `${url}${auth} sends ${describeKind(r.kind)} (lists ${r.listed.join(', ')})`];
    if (r.problem === 'none') return ['fail', `${url}${auth} ${r.detail}; serve refuses to start`];
    const down = / failed: /.test(r.detail);
    return [
      down ? 'fail' : 'warn',
      `${url}${auth} ${r.detail}${down ? '' : `; ${describeKind(FALLBACK_KIND)} will be sent until it lists kinds`}`,
    ];
  } catch (err) {
    return ['fail', `${url}${auth} unusable: ${(err as Error).message}`];
  }
}

/** URLs lose credentials and key-like parts; any configured secret value that still appears becomes ***. */
export function redact(text: string, config: Partial<Record<string, unknown>>): string {
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
  const lines = checks.map((c) => `[${mark[c.status]}] ${c.name.padEnd(width)}  ${c.detail}`);
  const failed = checks.filter((c) => c.status === 'fail').length;
  lines.push('', failed ? `${failed} check(s) failed` : 'all required checks passed');
  return lines.join('\n') + '\n';
}
