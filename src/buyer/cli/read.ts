import { existsSync } from 'node:fs';
import { serverErrorText } from '../../../packages/isocast-client/src/index.ts';
import { DEFAULT_SERVER } from '../../../packages/isocast-client/src/mcp/config.ts';
import { MAX_WAIT_S } from '../../../packages/isocast-client/src/mcp/read.ts';
import { intFlag, parseFlags, requireValue } from '../../lib/flags.ts';
import { type ApiAnswer, createClient, NetworkError, refusal, serverFlags, serverUrl, unknownCity } from './client.ts';
import { loadAccount } from './key.ts';
import type { SignalPublic } from '../../signals/schemas.ts';
import { CliError, defaultSleep, EXIT, formatSignal, withoutDisclaimer, type CliIo } from './output.ts';
import {
  describeServers,
  findReceipt,
  LEGACY_RECEIPTS_FILE,
  loadReceipts,
  receiptsFileFor,
  recoverReceipts,
  type Receipt,
} from './receipts.ts';

/** `isocast read`: `--follow` long-polls, or polls every --interval against a server that answers at once. */
const READ_FLAGS = serverFlags(['city', 'since', 'receipts', 'key-file', 'interval', 'wait'], ['follow']);
const DEFAULT_INTERVAL_S = 30;
const MIN_INTERVAL_S = 1;
const MAX_BACKOFF_S = 300;

const buyMore = (city: string, server: string) =>
  `isocast buy --city ${city} --count 20${server === DEFAULT_SERVER ? '' : ` --server ${server}`}`;

async function readSetup(argv: readonly string[], io: CliIo) {
  const flags = parseFlags(argv, READ_FLAGS);
  const city = requireValue(flags, 'city');
  const server = serverUrl(flags, io.envServer);
  const since = intFlag(flags, 'since', { fallback: 0 });
  const json = flags.on.has('json');
  const intervalMs = intFlag(flags, 'interval', { fallback: DEFAULT_INTERVAL_S, min: MIN_INTERVAL_S }) * 1000;
  const waitS = intFlag(flags, 'wait', { fallback: MAX_WAIT_S });
  if (waitS > MAX_WAIT_S) throw new CliError(`--wait must be at most ${MAX_WAIT_S} seconds`, EXIT.usage);
  const timeoutMs = intFlag(flags, 'timeout', { fallback: 15, min: 1 }) * 1000;
  const receiptsFile = receiptsFileFor(flags, io);
  const client = createClient(server, timeoutMs);
  const now = () => io.nowMs?.() ?? Date.now();
  // With a key at hand, read with that wallet's receipt; without one, the newest receipt will do.
  const keyed = flags.values['key-file'] !== undefined || io.envKey !== undefined;
  const account = keyed ? loadAccount(flags, { envKey: io.envKey }) : undefined;
  const all = loadReceipts(receiptsFile);
  let recoveredOnce = false;
  // A lost, never-made or no longer recognised receipt: one signature (no payment), once a run.
  const recover = async (): Promise<Receipt | null> => {
    if (recoveredOnce || !account) return null;
    recoveredOnce = true;
    const recovered = await recoverReceipts(client, account, { file: receiptsFile, nowMs: now() });
    if (!recovered) return null;
    if (!json)
      io.stderr(
        `recovered the receipt for ${account.address} from ${server} (${recovered.cities.map((c) => c.city).join(', ')}); saved to ${receiptsFile}`,
      );
    return findReceipt(recovered.receipts, { server, city, wallet: account.address });
  };
  let receipt = findReceipt(all, { server, city, wallet: account?.address });
  if (!receipt && account) receipt = await recover();
  if (!receipt) {
    const elsewhere = all.length > 0 ? ` Receipts in that file are for: ${describeServers(all)}.` : '';
    const legacy = existsSync(LEGACY_RECEIPTS_FILE)
      ? ` An older receipts file exists at ./${LEGACY_RECEIPTS_FILE}; use it with --receipts ${LEGACY_RECEIPTS_FILE}.`
      : '';
    const hint = account ? '' : ' With your key (--key-file or ISOCAST_KEY) a lost receipt is recovered automatically.';
    throw new CliError(
      `no receipt for ${server}${account ? ` and wallet ${account.address}` : ''} in ${receiptsFile}.${elsewhere}${legacy}${hint} ` +
        `To buy: ${buyMore(city, server)}`,
      EXIT.paymentNeeded,
    );
  }
  return {
    io,
    city,
    server,
    follow: flags.on.has('follow'),
    json,
    intervalMs,
    waitS,
    timeoutMs,
    client,
    sleep: io.sleep ?? defaultSleep,
    now,
    recover,
    // What changes from one request to the next:
    since,
    headers: { authorization: `Bearer ${receipt.receiptToken}` },
    printed: 0,
    backoffMs: intervalMs,
    waitingSaid: false,
    offlineSaid: false,
    /** Caught up on the previous answer: the next request long-polls. */
    caughtUp: false,
    /** Until a long-poll comes back early with nothing new. */
    serverHolds: true,
  };
}

/** One run's settings and its progress. */
type Run = Awaited<ReturnType<typeof readSetup>>;

type Page = { signals: SignalPublic[]; paidThrough: number; latest: number };

function exhausted({ paidThrough, latest }: { paidThrough: number; latest: number }, r: Run): CliError {
  const what =
    paidThrough === 0
      ? `this wallet has no bundle for ${r.city} yet. Buy one with`
      : `bundle used up: entitled through seq ${paidThrough}, latest is ${latest}. Buy more with`;
  return new CliError(`${what}: ${buyMore(r.city, r.server)}`, EXIT.paymentNeeded);
}

function readProblem(a: ApiAnswer, r: Run): CliError {
  if (a.status === 402 && typeof a.body.paid_through === 'number')
    return exhausted({ paidThrough: a.body.paid_through, latest: a.body.latest }, r);
  const e = serverErrorText(a.status, a.body);
  return refusal(
    a,
    {
      402: [`the server did not accept the receipt: ${e}`, EXIT.paymentNeeded],
      401: [`the server did not accept the receipt token: ${e}`, EXIT.paymentNeeded],
      403: 'this wallet is on a sanctions list; reads are refused',
      404: [unknownCity(r.city), EXIT.usage],
    },
    `read failed with HTTP ${a.status}: ${e}`,
  );
}

export async function readCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const r = await readSetup(argv, io);
  while (!io.signal?.aborted) {
    const held = r.follow && r.caughtUp && r.waitS > 0 && r.serverHolds;
    const askedAt = performance.now();
    const a = await ask(r, { held });
    if (a === 'stopped') break;
    if (a === 'again' || (await askAgain(r, a))) continue;
    const page = pageOf(r, a);
    for (const s of page.signals) {
      io.stdout(r.json ? JSON.stringify(s) : formatSignal(s));
      r.printed++;
    }
    if (page.signals.length > 0) r.waitingSaid = false;
    if (a.status === 200) r.since = a.body.next_cursor;
    if (a.status === 200 && a.body.more) continue;
    if (!r.follow) return summary(r, { answer: a, page });
    if (r.since >= page.paidThrough) throw exhausted(page, r);
    // A long-poll that came back early with nothing means this server does not hold reads (an
    // older one): from then on poll politely instead of asking again at once.
    if (held && page.signals.length === 0 && performance.now() - askedAt < r.waitS * 1000 - 1_000 && r.serverHolds) {
      r.serverHolds = false;
      r.waitingSaid = false;
    }
    r.caughtUp = true;
    await waitForMore(r, page);
  }
  io.stderr(`stopped after ${r.printed} signal(s); resume with --since ${r.since}`);
  return EXIT.ok;
}

/** One request; 'again' after a network failure a follower waits out, 'stopped' when aborted. */
async function ask(r: Run, { held }: { held: boolean }): Promise<ApiAnswer | 'again' | 'stopped'> {
  const { io } = r;
  let a: ApiAnswer;
  try {
    const path = `/v1/signals?city=${encodeURIComponent(r.city)}&since=${r.since}${held ? `&wait=${r.waitS}` : ''}`;
    a = await r.client.request('GET', path, {
      headers: r.headers,
      signal: io.signal,
      ...(held ? { timeoutMs: r.waitS * 1000 + r.timeoutMs } : {}),
    });
  } catch (err) {
    if (io.signal?.aborted) return 'stopped';
    if (!(r.follow && err instanceof NetworkError)) throw err;
    // A follower outlives server restarts: wait longer each time, never hammer, say it once.
    if (!r.offlineSaid) io.stderr(`warning: ${err.message}; retrying with growing waits (up to ${MAX_BACKOFF_S} s)`);
    r.offlineSaid = true;
    await r.sleep(r.backoffMs, io.signal);
    r.backoffMs = Math.min(r.backoffMs * 2, MAX_BACKOFF_S * 1000);
    return 'again';
  }
  if (r.offlineSaid) io.stderr(`reconnected to ${r.server}`);
  r.offlineSaid = false;
  r.backoffMs = r.intervalMs;
  return a;
}

/** A busy server (followers wait and ask again) or a refused token a signature may recover. */
async function askAgain(r: Run, a: ApiAnswer): Promise<boolean> {
  if (a.status === 429 || a.status === 503) {
    if (!r.follow) throw readProblem(a, r);
    await r.sleep(Math.max(r.intervalMs, a.retryAfterMs ?? 0), r.io.signal);
    return true;
  }
  const tokenRefused = a.status === 401 || (a.status === 402 && typeof a.body.paid_through !== 'number');
  if (tokenRefused) {
    const fresh = await r.recover();
    if (fresh) {
      r.headers = { authorization: `Bearer ${fresh.receiptToken}` };
      return true;
    }
  }
  return false;
}

function pageOf(r: Run, a: ApiAnswer): Page {
  const paidThrough = a.body.paid_through;
  // A 402 past the latest signal but inside the bundle: nothing new yet, not a used-up bundle.
  if (a.status === 200 || (a.status === 402 && typeof paidThrough === 'number' && r.since < paidThrough))
    return { signals: a.status === 200 ? a.body.signals : [], paidThrough, latest: a.body.latest };
  throw readProblem(a, r);
}

/** Without --follow: one closing line on stderr (JSON with --json). */
function summary(r: Run, { answer: a, page }: { answer: ApiAnswer; page: Page }): number {
  const { paidThrough, latest } = page;
  const none = r.printed === 0 && r.since >= latest;
  const note = none
    ? `no new signals yet: latest is seq ${latest}, entitled through seq ${paidThrough}; run again later or add --follow`
    : `${r.printed} signal(s); entitled through seq ${paidThrough}, latest ${latest}; next --since ${r.since}`;
  if (r.json)
    r.io.stderr(JSON.stringify({ ...withoutDisclaimer({ ...a.body, signals: undefined }), printed: r.printed }));
  else r.io.stderr(note);
  return EXIT.ok;
}

/** Says once that it is waiting; sleeps the interval unless the next request long-polls. */
async function waitForMore(r: Run, { paidThrough, latest }: Page): Promise<void> {
  const longPolling = r.waitS > 0 && r.serverHolds;
  if (!r.waitingSaid) {
    const left = paidThrough - r.since;
    const how = longPolling
      ? `the server answers as soon as one is stored (long-poll, up to ${r.waitS} s per request)`
      : `polling every ${r.intervalMs / 1000} s, next at ${new Date(r.now() + r.intervalMs).toISOString().slice(11, 19)}Z`;
    r.io.stderr(
      `waiting for new ${r.city} signals (${left} left in the bundle, latest seq ${latest}); ${how}. Ctrl-C stops`,
    );
    r.waitingSaid = true;
  }
  if (!longPolling) await r.sleep(r.intervalMs, r.io.signal);
}
