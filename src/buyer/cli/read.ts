import { intFlag, parseFlags, requireValue, serverUrl } from './args.ts';
import { DEFAULT_SERVER } from './buy.ts';
import { createClient, NetworkError, serverError, type ApiAnswer } from './client.ts';
import { loadAccount } from './key.ts';
import {
  CliError,
  defaultSleep,
  EXIT,
  formatSignal,
  withoutDisclaimer,
  type CliIo,
  type SignalLine,
} from './output.ts';
import { receiptsFileFor } from './paths.ts';
import {
  describeServers,
  findReceipt,
  LEGACY_RECEIPTS_FILE,
  legacyReceiptsPresent,
  loadReceipts,
  type Receipt,
} from './receipts.ts';
import { recoverReceipts } from './recover.ts';

/**
 * `isocast read --city <slug> [--since N] [--follow]`: pages through the entitled signals with
 * the saved receipt token (recovering it with a wallet signature when it is missing). `--follow`
 * then long-polls (`wait=--wait`, 25 s by default: the server answers as soon as a signal is
 * stored, issue 25.4); against a server that answers at once anyway (an older one, or one holding
 * too many reads) it polls politely every --interval seconds (30 by default, longer when the
 * server asks with Retry-After or the network fails). It says once that it is waiting, prints
 * nothing more until a signal arrives, and ends when the bundle is used up or on Ctrl-C.
 */
export const READ_FLAGS = {
  strings: ['city', 'since', 'server', 'receipts', 'key-file', 'interval', 'timeout', 'wait'],
  booleans: ['follow', 'json', 'insecure'],
} as const;
export const DEFAULT_INTERVAL_S = 30;
/** The server's longest hold (payments/bundle.ts MAX_WAIT_S). */
export const DEFAULT_WAIT_S = 25;
const MIN_INTERVAL_S = 1;
const MAX_BACKOFF_S = 300;

const buyMore = (city: string, server: string) =>
  `isocast buy --city ${city} --count 20${server === DEFAULT_SERVER ? '' : ` --server ${server}`}`;

function exhausted(paidThrough: number, latest: number, city: string, server: string): CliError {
  if (paidThrough === 0)
    return new CliError(
      `this wallet has no bundle for ${city} yet. Buy one with: ${buyMore(city, server)}`,
      EXIT.paymentNeeded,
    );
  return new CliError(
    `bundle used up: entitled through seq ${paidThrough}, latest is ${latest}. Buy more with: ${buyMore(city, server)}`,
    EXIT.paymentNeeded,
  );
}

function readProblem(a: ApiAnswer, city: string, server: string): CliError {
  if (a.status === 402 && typeof a.body.paid_through === 'number')
    return exhausted(a.body.paid_through, a.body.latest, city, server);
  if (a.status === 402)
    return new CliError(`the server did not accept the receipt: ${serverError(a)}`, EXIT.paymentNeeded);
  if (a.status === 401)
    return new CliError(`the server did not accept the receipt token: ${serverError(a)}`, EXIT.paymentNeeded);
  if (a.status === 403) return new CliError('this wallet is on a sanctions list; reads are refused');
  if (a.status === 404) return new CliError(`unknown city: ${city} (the list is at GET /v1/cities)`);
  return new CliError(`read failed with HTTP ${a.status}: ${serverError(a)}`);
}

const clock = (ms: number) => `${new Date(ms).toISOString().slice(11, 19)}Z`;

export async function readCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, READ_FLAGS);
  const city = requireValue(flags, 'city');
  const server = serverUrl(flags, DEFAULT_SERVER);
  let since = intFlag(flags, 'since', 0, 0);
  const follow = flags.on.has('follow');
  const json = flags.on.has('json');
  const intervalMs = intFlag(flags, 'interval', DEFAULT_INTERVAL_S, MIN_INTERVAL_S) * 1000;
  const waitS = intFlag(flags, 'wait', DEFAULT_WAIT_S, 0);
  if (waitS > DEFAULT_WAIT_S) throw new CliError(`--wait must be at most ${DEFAULT_WAIT_S} seconds`, EXIT.usage);
  const timeoutMs = intFlag(flags, 'timeout', 15, 1) * 1000;
  const receiptsFile = receiptsFileFor(flags, io);
  const client = createClient(server, timeoutMs);
  const now = () => io.nowMs?.() ?? Date.now();
  // With a key at hand, read with that wallet's receipt; without one, the newest receipt will do.
  const keyed = flags.values['key-file'] !== undefined || io.envKey !== undefined;
  const account = keyed ? loadAccount({ keyFile: flags.values['key-file'], envKey: io.envKey }).account : undefined;
  const all = loadReceipts(receiptsFile);
  let receipt: Receipt | null = findReceipt(all, server, city, account?.address);
  let recoveredOnce = false;
  // A lost, never-made or no longer recognised receipt: one signature recovers the token (no payment).
  const recover = async (): Promise<Receipt | null> => {
    recoveredOnce = true;
    const recovered = account ? await recoverReceipts(client, account, receiptsFile, now()) : null;
    if (!recovered || !account) return null;
    if (!json)
      io.stderr(
        `recovered the receipt for ${account.address} from ${server} (${recovered.cities.map((c) => c.city).join(', ')}); saved to ${receiptsFile}`,
      );
    return findReceipt(recovered.receipts, server, city, account.address);
  };
  if (!receipt && account) receipt = await recover();
  if (!receipt) {
    const elsewhere = all.length > 0 ? ` Receipts in that file are for: ${describeServers(all)}.` : '';
    const legacy = legacyReceiptsPresent()
      ? ` An older receipts file exists at ./${LEGACY_RECEIPTS_FILE}; use it with --receipts ${LEGACY_RECEIPTS_FILE}.`
      : '';
    const hint = account ? '' : ' With your key (--key-file or ISOCAST_KEY) a lost receipt is recovered automatically.';
    throw new CliError(
      `no receipt for ${server}${account ? ` and wallet ${account.address}` : ''} in ${receiptsFile}.${elsewhere}${legacy}${hint} ` +
        `To buy: ${buyMore(city, server)}`,
      EXIT.paymentNeeded,
    );
  }
  const sleep = io.sleep ?? defaultSleep;
  let headers = { authorization: `Bearer ${receipt.receiptToken}` };
  let printed = 0;
  let backoffMs = intervalMs;
  let waitingSaid = false;
  let offlineSaid = false;
  // Caught up on the previous answer: the next request long-polls.
  let caughtUp = false;
  // Until a long-poll comes back early with nothing new.
  let serverHolds = true;

  while (!io.signal?.aborted) {
    let a: ApiAnswer;
    const held = follow && caughtUp && waitS > 0 && serverHolds;
    const askedAt = performance.now();
    try {
      const path = `/v1/signals?city=${encodeURIComponent(city)}&since=${since}${held ? `&wait=${waitS}` : ''}`;
      a = await client.request('GET', path, {
        headers,
        signal: io.signal,
        ...(held ? { timeoutMs: waitS * 1000 + timeoutMs } : {}),
      });
    } catch (err) {
      if (io.signal?.aborted) break;
      if (!(follow && err instanceof NetworkError)) throw err;
      // A follower outlives server restarts: wait longer each time, never hammer, say it once.
      if (!offlineSaid) io.stderr(`warning: ${err.message}; retrying with growing waits (up to ${MAX_BACKOFF_S} s)`);
      offlineSaid = true;
      await sleep(backoffMs, io.signal);
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_S * 1000);
      continue;
    }
    if (offlineSaid) io.stderr(`reconnected to ${server}`);
    offlineSaid = false;
    backoffMs = intervalMs;
    if (a.status === 429 || a.status === 503) {
      if (!follow) throw readProblem(a, city, server);
      await sleep(Math.max(intervalMs, a.retryAfterMs ?? 0), io.signal);
      continue;
    }
    const tokenRefused = a.status === 401 || (a.status === 402 && typeof a.body.paid_through !== 'number');
    if (tokenRefused && account && !recoveredOnce) {
      const fresh = await recover();
      if (fresh) {
        headers = { authorization: `Bearer ${fresh.receiptToken}` };
        continue;
      }
    }
    let signals: SignalLine[] = [];
    let paidThrough: number;
    let latest: number;
    if (a.status === 200) {
      signals = a.body.signals as SignalLine[];
      paidThrough = a.body.paid_through;
      latest = a.body.latest;
    } else if (a.status === 402 && typeof a.body.paid_through === 'number' && since < a.body.paid_through) {
      // Asking past the latest signal but inside the bundle: nothing new yet, not a used-up bundle.
      paidThrough = a.body.paid_through;
      latest = a.body.latest;
    } else {
      throw readProblem(a, city, server);
    }
    for (const s of signals) {
      io.stdout(json ? JSON.stringify(s) : formatSignal(s));
      printed++;
    }
    if (signals.length > 0) waitingSaid = false;
    if (a.status === 200) since = a.body.next_cursor;
    if (a.status === 200 && a.body.more) continue;
    if (!follow) {
      const none = printed === 0 && since >= latest;
      const note = none
        ? `no new signals yet: latest is seq ${latest}, entitled through seq ${paidThrough}; run again later or add --follow`
        : `${printed} signal(s); entitled through seq ${paidThrough}, latest ${latest}; next --since ${since}`;
      if (json) io.stderr(JSON.stringify({ ...withoutDisclaimer({ ...a.body, signals: undefined }), printed }));
      else io.stderr(note);
      return EXIT.ok;
    }
    if (since >= paidThrough) throw exhausted(paidThrough, latest, city, server);
    // A long-poll that came back early with nothing means this server does not hold reads (an
    // older one): from then on poll politely instead of asking again at once.
    if (held && signals.length === 0 && performance.now() - askedAt < waitS * 1000 - 1_000 && serverHolds) {
      serverHolds = false;
      waitingSaid = false;
    }
    caughtUp = true;
    const longPolling = waitS > 0 && serverHolds;
    if (!waitingSaid) {
      const left = paidThrough - since;
      const how = longPolling
        ? `the server answers as soon as one is stored (long-poll, up to ${waitS} s per request)`
        : `polling every ${intervalMs / 1000} s, next at ${clock(now() + intervalMs)}`;
      io.stderr(
        `waiting for new ${city} signals (${left} left in the bundle, latest seq ${latest}); ${how}. Ctrl-C stops`,
      );
      waitingSaid = true;
    }
    if (!longPolling) await sleep(intervalMs, io.signal);
  }
  io.stderr(`stopped after ${printed} signal(s); resume with --since ${since}`);
  return EXIT.ok;
}
