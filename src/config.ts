import {
  flag,
  httpUrl,
  intIn,
  matching,
  number,
  oneOf,
  parseShape,
  replicaUrl,
  text,
  type ShapeOutput,
} from './lib/env-fields.ts';
import { readFlags } from './lib/flags.ts';
import { flagOf, isSecretName, SECRET_FILE_NAMES, secretFlagProblem, secretsFromFiles } from './lib/secrets.ts';
import { splitList, urlCredentialProblems } from './lib/url-credentials.ts';
import { safetyProblems } from './ops/safety.ts';
import { parseTrustedProxies } from './limits/client-address.ts';
import { CDP_FACILITATOR_URL, cdpSigningKey } from './payments/settlers/cdp-key.ts';
import { replicationProblems } from './replication/settings.ts';
import { citiesProblem } from './cities/catalog.ts';
import { BASE_USDC } from '../packages/isocast-client/src/chain.ts';
import { ConfigError } from './lib/env-fields.ts';

/** The public Base endpoint: RPC_URL's default in live mode (rate-limited; set your own for volume). */
const BASE_RPC_URL = 'https://mainnet.base.org';
const address = () => matching(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');

export const CONFIG_SHAPE = {
  PORT: intIn(0, 65535).default(8402),
  HOST: text().optional(),
  DATA_DIR: text().default('./data'),
  BASE_URL: httpUrl().optional(),
  TERMS_URL: httpUrl().optional(),
  PAYMENT_MODE: oneOf(['mock', 'live']).default('mock'),
  PAY_TO: address().optional(),
  SERVER_SECRET: matching(/^(0x)?[0-9a-fA-F]{64,}$/, 'must be at least 32 bytes of hex').optional(),
  SETTLEMENT: oneOf(['facilitator', 'chain']).default('facilitator'),
  FACILITATOR_URL: text()
    .check((v) => facilitatorUrlsProblem(v))
    .optional(),
  FACILITATOR_AUTH: text().optional(),
  CDP_API_KEY_ID: text().optional(),
  CDP_API_KEY_SECRET: text().optional(),
  RPC_URL: httpUrl().optional(),
  SETTLER_PRIVATE_KEY: matching(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex key').optional(),
  USDC_ADDRESS: address().default(BASE_USDC),
  OFAC_LIST_PATH: text().optional(),
  OFAC_EXTRA: text().optional(),
  OFAC_REQUIRED: flag().optional(),
  V2_NONCE: oneOf(['any', 'bound']).default('any'),
  FEED: oneOf(['sim', 'live']).default('sim'),
  MARKET_KINDS: oneOf(['high,low', 'high', 'low']).default('high,low'),
  POLL_INTERVAL_MS: intIn(250, 3_600_000).optional(),
  WU_POLL_INTERVAL_MS: intIn(1_000, 3_600_000).default(30_000),
  ODDS_DEADLINE_MS: intIn(250, 10_000).default(10_000),
  SIM_SPEED: number()
    .check((n) => (n > 0 ? null : 'must be positive'))
    .check((n) => (n <= 100_000 ? null : 'must be at most 100000'))
    .default(60),
  SIM_SEED: text().default('isocast'),
  WEATHER_SOURCE: oneOf(['wu', 'metar']).default('metar'),
  GAMMA_URL: httpUrl().default('https://gamma-api.polymarket.com'),
  CLOB_URL: httpUrl().default('https://clob.polymarket.com'),
  WEATHER_URL: httpUrl().default('https://api.weather.com'),
  WU_API_KEY: text().optional(),
  METAR_URL: httpUrl().default('https://aviationweather.gov'),
  HKO_URL: httpUrl().default('https://data.weather.gov.hk'),
  CITIES: text()
    .check((v) => citiesProblem(v))
    .default('spec'),
  DISCOVERY_INTERVAL_MS: intIn(60_000, 86_400_000).default(3_600_000),
  MESSENGER_BOT_TOKEN: text().optional(),
  MESSENGER_API_URL: httpUrl().default('https://api.telegram.org'),
  ADMIN_TOKEN: text().optional(),
  LOG_LEVEL: oneOf(['debug', 'info', 'warn', 'error']).default('info'),
  LOG_FORMAT: oneOf(['json', 'pretty']).optional(),
  RECONCILE_INTERVAL_MS: intIn(1_000, 3_600_000).default(30_000),
  TRUSTED_PROXIES: text().optional(),
  RATE_LIMIT_ADDRESS_PER_MIN: intIn(0, 1_000_000).default(300),
  RATE_LIMIT_ADDRESS_BURST: intIn(1, 1_000_000).default(120),
  RATE_LIMIT_WALLET_PER_MIN: intIn(0, 1_000_000).default(60),
  RATE_LIMIT_WALLET_BURST: intIn(1, 1_000_000).default(60),
  TEST_MESSAGES_PER_HOUR: intIn(0, 3_600).default(6),
  TEST_MESSAGES_BURST: intIn(1, 100).default(3),
  MAX_CONNECTIONS_PER_ADDRESS: intIn(0, 100_000).default(100),
  MAX_SIGNAL_WAITERS: intIn(0, 1_000_000).default(10_000),
  RETAIN_OUTBOX_DAYS: intIn(0, 36_500).default(30),
  RETAIN_FAILED_PAYMENTS_DAYS: intIn(0, 36_500).default(30),
  RETAIN_RECEIPTS_DAYS: intIn(0, 36_500).default(365),
  REPLICA_URL: replicaUrl().optional(),
  REPLICA_SYNC_INTERVAL_MS: intIn(200, 60_000).default(1_000),
  REPLICA_ENDPOINT: httpUrl().optional(),
  REPLICA_REGION: text().optional(),
  REPLICA_ACCESS_KEY_ID: text().optional(),
  REPLICA_SECRET_ACCESS_KEY: text().optional(),
  REPLICA_SFTP_KEY_PATH: text().optional(),
  LITESTREAM_BIN: text().optional(),
  RECEIPT_TTL_DAYS: intIn(0, 36_500).default(90),
  ROLE: oneOf(['primary', 'reader']).default('primary'),
  NATS_URL: matching(/^(nats|tls):\/\/\S+$/, 'must be a nats:// or tls:// URL').optional(),
  PRIMARY_URL: httpUrl().optional(),
  READ_MAX_LAG_MS: intIn(1_000, 600_000).default(10_000),
  FORWARD_TIMEOUT_MS: intIn(1_000, 120_000).default(30_000),
};

export type Config = ReturnType<typeof loadConfig>;

const CONFIG_KEYS = Object.keys(CONFIG_SHAPE) as (keyof typeof CONFIG_SHAPE)[];

export { ConfigError };

/** `--poll-interval-ms 1000` or `--poll-interval-ms=1000` -> POLL_INTERVAL_MS (src/lib/flags.ts reads them). */
function flagsToEnv(argv: string[]): { values: Record<string, string>; problems: string[] } {
  const byFlag = new Map<string, string>([...CONFIG_KEYS, ...SECRET_FILE_NAMES].map((k) => [flagOf(k).slice(2), k]));
  const read = readFlags(argv, {
    strings: [...byFlag.keys()],
    booleans: [],
    refuse: (flag) => (isSecretName(byFlag.get(flag)!) ? secretFlagProblem(byFlag.get(flag)!) : null),
  });
  const values: Record<string, string> = {};
  for (const [flag, value] of Object.entries(read.values)) values[byFlag.get(flag)!] = value;
  return { values, problems: read.problems };
}

export function loadConfig(env: Record<string, string | undefined>, argv: string[] = []) {
  const flags = flagsToEnv(argv);
  const files = secretsFromFiles({ ...env, ...flags.values });
  const input: Record<string, string> = {};
  for (const key of CONFIG_KEYS) {
    const v = flags.values[key] ?? files.values[key] ?? env[key];
    if (v !== undefined && v !== '') input[key] = v;
  }
  // Every problem in one run: a bad value leaves its variable unset, the checks that need it are
  // skipped (their problem would repeat the same variable), and the rest are still checked.
  const parsed = parseShape(CONFIG_SHAPE, input);
  const c = parsed.value;
  const problems = [...flags.problems, ...files.problems, ...parsed.problems];
  const named = (p: string) => p.slice(0, p.indexOf(':'));
  const already = new Set([...parsed.bad, ...files.problems.map((p) => named(p).replace(/_FILE$/, ''))]);
  const derived: string[] = [...safetyProblems(c), ...urlCredentialProblems(c), ...replicationProblems(c)];
  if (c.PAYMENT_MODE === 'live') {
    if (c.SETTLEMENT === 'facilitator' && !c.FACILITATOR_URL && !c.CDP_API_KEY_ID)
      derived.push(
        "FACILITATOR_URL: required when SETTLEMENT=facilitator in live mode (or set CDP_API_KEY_ID and CDP_API_KEY_SECRET for CDP's)",
      );
    if (c.SETTLEMENT === 'chain' && !c.RPC_URL) derived.push('RPC_URL: required when SETTLEMENT=chain in live mode');
    if (c.SETTLEMENT === 'chain' && !c.SETTLER_PRIVATE_KEY)
      derived.push('SETTLER_PRIVATE_KEY: required when SETTLEMENT=chain in live mode');
  }
  // CDP's key comes as a pair, and replaces FACILITATOR_AUTH (each request carries its own JWT).
  if (c.CDP_API_KEY_ID && !c.CDP_API_KEY_SECRET)
    derived.push('CDP_API_KEY_SECRET: required with CDP_API_KEY_ID (or CDP_API_KEY_SECRET_FILE)');
  if (c.CDP_API_KEY_SECRET && !c.CDP_API_KEY_ID) derived.push('CDP_API_KEY_ID: required with CDP_API_KEY_SECRET');
  if (c.CDP_API_KEY_ID && c.FACILITATOR_AUTH)
    derived.push('FACILITATOR_AUTH: not used with a CDP API key (each request carries its own JWT); set one of them');
  if (c.CDP_API_KEY_ID && c.CDP_API_KEY_SECRET) {
    try {
      cdpSigningKey(c.CDP_API_KEY_SECRET);
    } catch (err) {
      derived.push(`CDP_API_KEY_SECRET: ${(err as Error).message}`);
    }
  }
  if (c.FEED === 'live' && c.WEATHER_SOURCE === 'wu' && !c.WU_API_KEY)
    derived.push('WU_API_KEY: required when FEED=live and WEATHER_SOURCE=wu');
  if (c.ROLE === 'reader' && !c.NATS_URL) derived.push('NATS_URL: required when ROLE=reader');
  if (c.ROLE === 'reader' && !c.PRIMARY_URL) derived.push('PRIMARY_URL: required when ROLE=reader');
  try {
    parseTrustedProxies(c.TRUSTED_PROXIES);
  } catch (err) {
    derived.push(`TRUSTED_PROXIES: ${(err as Error).message}`);
  }
  problems.push(...derived.filter((p) => !already.has(named(p))));
  if (problems.length > 0) throw new ConfigError<ShapeOutput<typeof CONFIG_SHAPE>>(problems, c);
  const baseUrl = c.BASE_URL ?? `http://localhost:${c.PORT}`;
  return {
    ...c,
    // The mock plane must not look like a seller to other machines unless asked for (then main.ts warns).
    HOST: c.HOST ?? (c.PAYMENT_MODE === 'mock' ? '127.0.0.1' : '0.0.0.0'),
    BASE_URL: baseUrl,
    TERMS_URL: c.TERMS_URL ?? `${baseUrl}/terms.txt`,
    OFAC_REQUIRED: c.OFAC_REQUIRED ?? c.PAYMENT_MODE === 'live',
    // Live mode always has a chain to ask: an in-doubt settlement is resolved only by the token.
    RPC_URL: c.RPC_URL ?? (c.PAYMENT_MODE === 'live' ? BASE_RPC_URL : undefined),
    // A CDP API key without a URL means CDP's own facilitator.
    FACILITATOR_URL: c.FACILITATOR_URL ?? (c.CDP_API_KEY_ID ? CDP_FACILITATOR_URL : undefined),
    // Live: one batched METAR call per tick, 720 an hour, far inside aviationweather's 100 a minute
    // (docs/signal-engine.md "Latency and upstream budget"); the sim has no upstream at all.
    POLL_INTERVAL_MS: c.POLL_INTERVAL_MS ?? 5_000,
  };
}

/** DATA_DIR alone: the nightly backup must not fail on a serve-only secret it cannot read. */
export function loadDataDir(env: Record<string, string | undefined>, argv: string[] = []): { DATA_DIR: string } {
  const flags = flagsToEnv(argv);
  if (flags.problems.length > 0) throw new ConfigError(flags.problems);
  const dir = flags.values.DATA_DIR ?? env.DATA_DIR;
  return { DATA_DIR: dir === undefined || dir === '' ? (CONFIG_SHAPE.DATA_DIR.defaultValue as string) : dir };
}

/** Each FACILITATOR_URL entry an absolute http(s) URL; at most 8 (each may cost a timeout in one request). */
function facilitatorUrlsProblem(v: string): string | null {
  const urls = splitList(v);
  if (urls.length === 0) return 'must list at least one URL';
  if (urls.length > 8) return 'at most 8 facilitators';
  const bad = urls.find((u) => !URL.canParse(u) || !/^https?:\/\//.test(u));
  return bad === undefined ? null : 'each comma-separated entry must be an absolute http(s) URL';
}
