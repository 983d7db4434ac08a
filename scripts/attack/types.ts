import type { PrivateKeyAccount } from 'viem/accounts';

/**
 * The attack script's interface (issue 23). A case module is any `scripts/attack/<name>.ts` that
 * exports `cases: AttackCase[]`; `scripts/attack.ts` runs them all and prints a table, and
 * `test/attack/fast.test.ts` runs every case marked `fast` inside `npm test`.
 */
export interface AttackCase {
  /** Short, e.g. "inline replay of a settled authorization reads nothing". */
  name: string;
  /** What a safe server does. */
  expected: string;
  /** True: also run inside `npm test` (must take under 3 s on an idle machine). */
  fast: boolean;
  run(ctx: AttackContext): Promise<AttackResult>;
}

export type AttackResult = { observed: string; ok: boolean };

/** A real `isocast serve` on 127.0.0.1 in its own temp DATA_DIR (mock payments, sim feed). */
export interface AttackServer {
  baseUrl: string;
  dataDir: string;
  /** The process id: a case that must see the process (signals, /proc) may use it. */
  pid: number;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s). Servers a case started are stopped after it anyway. */
  stop(): Promise<void>;
}

export type ServerOptions = {
  /** Signals inserted for `SEEDED_CITY` before the server starts (default: `SEEDED_SIGNALS`). */
  seedSignals?: number;
};

export interface AttackContext {
  /**
   * The module's shared server: one per case module, started before its first case, with the
   * default configuration plus mock payments. Cases of one module run one after another on it.
   * A case that exhausts a budget, changes global state or needs other settings starts its own
   * with `startServer`.
   */
  baseUrl: string;
  dataDir: string;
  /** A city with `seededSignals` signals (seq 1..n) in the shared server's database. */
  city: string;
  seededSignals: number;
  /** The shared server's `BASE_URL` origin (what deployment-bound signatures name). */
  origin: string;
  /** Two fixed test wallets (private keys derived from their labels); see `account`. */
  accounts: { victim: PrivateKeyAccount; attacker: PrivateKeyAccount };
  /** A deterministic viem test wallet per label: a case that needs fresh wallets names its own. */
  account(label: string): PrivateKeyAccount;
  /**
   * Starts another real server with `env` added to the defaults (e.g. `{ RATE_LIMIT_ADDRESS_PER_MIN: '5' }`);
   * it is stopped when the case ends.
   */
  startServer(env?: Record<string, string>, opts?: ServerOptions): Promise<AttackServer>;
  /** JSON-or-text HTTP against `base` (default the shared server), with a 10 s timeout. */
  http(path: string, init?: RequestInit & { base?: string }): Promise<HttpAnswer>;
}

export type HttpAnswer = {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or null when the body is not JSON. */
  json: any;
  text: string;
};
