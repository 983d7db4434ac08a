import { CONFIG_SHAPE } from './config.ts';
import { SECRET_NAMES } from './lib/secrets.ts';

/** The binary's reference (it ships without a README); a default computed at start follows `; default: `. */
const CONFIG_DOCS: Record<keyof typeof CONFIG_SHAPE, string> = {
  PORT: 'TCP port to listen on',
  HOST: 'address to listen on; mock mode on a non-loopback HOST prints a warning; default: 127.0.0.1 in mock mode, 0.0.0.0 in live',
  DATA_DIR: 'holds isocast.db (+ WAL) and the generated server-secret; created 0700',
  BASE_URL: 'public address used in links and the 402 resource; default: http://localhost:PORT',
  TERMS_URL: 'terms address in the disclaimer and X-Terms-URL; default: BASE_URL/terms.txt',
  PAYMENT_MODE: 'mock: signatures verified, settlement simulated; live: real USDC settlement',
  PAY_TO: 'your settlement wallet; live refuses burn/zero/system addresses; default: mock: 0x…dEaD; live: required',
  SERVER_SECRET:
    '32+ bytes hex keying binding salts and receipts (secret); default: generated in DATA_DIR/server-secret',
  SETTLEMENT: 'live settler: facilitator (x402 /verify + /settle) or chain (self-submitted)',
  FACILITATOR_URL:
    'facilitator base URL (SETTLEMENT=facilitator in live); its GET /supported picks x402 v2 or v1; user:pass@ becomes Basic auth; a comma-separated list fails over in order (one unreachable, 5xx on /verify, or listing nothing we need is skipped for the next); default: https://api.cdp.coinbase.com/platform/v2/x402 with CDP_API_KEY_ID',
  FACILITATOR_AUTH:
    'Authorization header value sent to the facilitator (secret); with several FACILITATOR_URLs, one per URL in the same order, comma separated (empty for none)',
  CDP_API_KEY_ID:
    "Coinbase CDP API key id: each facilitator request then carries a fresh CDP JWT; FACILITATOR_URL defaults to CDP's",
  CDP_API_KEY_SECRET: 'the CDP API key secret (Ed25519 base64, or EC P-256 PEM) signing those JWTs (secret)',
  RPC_URL:
    'Base JSON-RPC endpoint: the chain settler (set it explicitly for SETTLEMENT=chain), and the USDC authorizationState lookups that resolve in-doubt settlements; user:pass@ becomes Basic auth; default: https://mainnet.base.org in live mode',
  RECONCILE_INTERVAL_MS:
    'how often in-doubt settlements are resolved from the chain while serving; also the Retry-After of a "settlement pending" 503',
  SETTLER_PRIVATE_KEY: 'key paying gas for SETTLEMENT=chain (secret)',
  USDC_ADDRESS: 'token contract of the EIP-3009 authorization',
  OFAC_LIST_PATH: 'sanctions list file (addresses one per line, or OFAC SDN XML); reloaded on SIGHUP and on change',
  OFAC_EXTRA: 'extra sanctioned addresses, comma separated',
  OFAC_REQUIRED:
    'live refuses to start without a loadable list unless this is false; default: true in live, false in mock',
  V2_NONCE:
    "x402 v2 PAYMENT-SIGNATURE nonces: any (the standard exact scheme: any 32-byte nonce, bound to the bundle the first time it is seen) or bound (the seed's nonce binding on v2 too); X-Payment (v1) is always bound",
  FEED: 'sim: deterministic simulated weather + markets; live: real upstreams (live payments need it)',
  MARKET_KINDS:
    'which markets of each served city are streams: high,low (each city also gets a <city>-low daily-low stream), high (only the daily-high markets), or low',
  POLL_INTERVAL_MS: 'poller cadence (sim and live; live: one batched METAR call per tick, 720 an hour); default: 5000',
  WU_POLL_INTERVAL_MS: "weather.com's own cadence with WEATHER_SOURCE=wu (one call per station per poll)",
  ODDS_DEADLINE_MS: 'odds budget of a crossing (at most 10000); past it the signal is stored with buckets: null',
  LOG_FORMAT:
    'json (one object per line) or pretty (one readable line per event); secrets are redacted in both; default: pretty when stdout is a terminal, else json',
  SIM_SPEED: 'simulated time runs this many times faster than real time (FEED=sim)',
  SIM_SEED: 'seed of the simulated feed',
  WEATHER_SOURCE: 'live observations: metar (aviationweather, no key) or wu (weather.com, needs WU_API_KEY)',
  GAMMA_URL: 'Polymarket Gamma API (market discovery)',
  CLOB_URL: 'Polymarket CLOB API (odds)',
  WEATHER_URL: 'weather.com API (WEATHER_SOURCE=wu)',
  WU_API_KEY: 'weather.com API key (secret)',
  METAR_URL: 'aviationweather.gov API (WEATHER_SOURCE=metar, and every NOAA-rule day)',
  HKO_URL: "Hong Kong Observatory open data (no key): Hong Kong's running 0.1 °C maximum",
  CITIES:
    'cities served: spec (the 37 of the spec), all (also every city whose discovered rule a supported source observes), or slugs: nyc,hong-kong',
  DISCOVERY_INTERVAL_MS:
    "how often Gamma is asked for the daily-high and daily-low events (tag_slug=highest-temperature, tag_slug=lowest-temperature) and each one's rule is read",
  MESSENGER_BOT_TOKEN: 'chat delivery bot token, Telegram Bot API wire format; unset: no chat delivery (secret)',
  MESSENGER_API_URL: 'bot API host',
  ADMIN_TOKEN:
    'bearer token for /admin and /metrics, 32+ characters: openssl rand -hex 32 (secret); default: unset: /admin and /metrics off (404)',
  TRUSTED_PROXIES:
    'comma list of proxy IPs/CIDRs whose X-Forwarded-For is believed (the right-most untrusted hop is the client); default: none',
  RATE_LIMIT_ADDRESS_PER_MIN:
    'per client address on subscribe, inline payment, receipt recovery and chat registration (0: off)',
  RATE_LIMIT_ADDRESS_BURST: 'burst allowance of the per-address limit',
  RATE_LIMIT_WALLET_PER_MIN: 'per payer wallet on the same routes, once a signature names it (0: off)',
  RATE_LIMIT_WALLET_BURST: 'burst allowance of the per-wallet limit',
  TEST_MESSAGES_PER_HOUR:
    'chat registration test messages per chat and per wallet, twice that per client address (paid pushes never wait for them)',
  TEST_MESSAGES_BURST: 'burst allowance of the test message budget',
  MAX_SIGNAL_WAITERS:
    'GET /v1/signals?wait=N reads held at once; one more answers 503 with Retry-After (0: wait is ignored, reads answer at once)',
  MAX_CONNECTIONS_PER_ADDRESS:
    'open connections one client (IPv4 address, IPv6 /64) may hold; one more gets 429 and is closed. Sockets from TRUSTED_PROXIES are not capped (0: off)',
  RETAIN_OUTBOX_DAYS: 'days sent and failed delivery rows are kept (0: forever)',
  RETAIN_FAILED_PAYMENTS_DAYS:
    'days failed payment attempts are kept; applied payments are the ledger and kept forever (0: forever)',
  RETAIN_RECEIPTS_DAYS: 'days a receipt token is kept once its wallet is owed no further signal (0: forever)',
  RECEIPT_TTL_DAYS:
    'days a receipt bearer token reads after it was issued (0: forever); an expired token answers 401 and one wallet signature (POST /v1/receipts) gets a new one',
  LOG_LEVEL: 'debug, info, warn or error; logs are JSON lines on stdout',
  REPLICA_URL:
    'Litestream replica of the database: s3://bucket/path, sftp://user@host/path or a directory on another disk; serve supervises litestream (docs/operations.md, Durability); default: unset: no replication',
  REPLICA_SYNC_INTERVAL_MS: 'longest a commit waits before its upload to the replica starts',
  REPLICA_ENDPOINT: 'S3-compatible endpoint for s3:// replicas (MinIO, R2, B2, Spaces); unset: AWS',
  REPLICA_REGION: 's3:// replica region',
  REPLICA_ACCESS_KEY_ID: 's3:// replica access key id; unset: AWS_* variables or the instance role (secret)',
  REPLICA_SECRET_ACCESS_KEY: 's3:// replica secret access key (secret)',
  REPLICA_SFTP_KEY_PATH: 'private key file for sftp:// replicas (required for them)',
  ROLE: 'primary (sells, polls, writes the ledger) or reader (serves reads from a copy fed by NATS_URL and forwards purchases to PRIMARY_URL; docs/operations.md, Scaling out)',
  NATS_URL:
    'NATS server with JetStream (nats://host:4222): a primary publishes every signal and entitlement change there; a reader follows it; default: unset: a single node, nothing published',
  PRIMARY_URL: "a reader's primary (http://primary:8402): purchases and signed writes are forwarded there",
  READ_MAX_LAG_MS: 'a reader behind the primary by more than this answers reads 503 with Retry-After',
  FORWARD_TIMEOUT_MS: "how long a reader waits for the primary's answer to a forwarded request",
  LITESTREAM_BIN:
    'the litestream executable (v0.3.x) used when REPLICA_URL is set; default: litestream next to isocast, on PATH, or from npm install -g @flydotio/litestream',
};

export function configHelp(): string {
  const w = Math.max(...Object.keys(CONFIG_DOCS).map((name) => name.length));
  const lines = Object.entries(CONFIG_DOCS).map(([name, doc]) => {
    const [meaning, computed] = doc.split('; default: ');
    const literal = CONFIG_SHAPE[name as keyof typeof CONFIG_SHAPE].defaultValue;
    const shown = computed ?? (literal === undefined ? 'unset' : String(literal));
    return `  ${name.padEnd(w)}  ${meaning}\n  ${' '.repeat(w)}  default: ${shown}`;
  });
  return `Configuration: environment variables (or --kebab-case flags of serve; a flag wins).

${lines.join('\n')}

Secrets, marked (secret): ${SECRET_NAMES.join(', ')}.
They are never accepted as flags (any local user can read a process's arguments). Set them in the
environment, or as <NAME>_FILE=<path>: the file's content, trailing newline trimmed. With systemd:
LoadCredential=admin-token:/etc/isocast/admin-token and Environment=ADMIN_TOKEN_FILE=%d/admin-token.
Refused at start (exit 2): live with FEED=sim, with a burn or mock PAY_TO, without a loadable
sanctions list (unless OFAC_REQUIRED=false), and an ADMIN_TOKEN shorter than 32 characters or
copied from the example.
`;
}
