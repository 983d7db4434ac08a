import type { PrivateKeyAccount } from 'viem/accounts';
import { DEFAULT_SERVER } from './buy.ts';
import { NetworkError, serverError, type ApiAnswer, type createClient } from './client.ts';
import { CliError, EXIT, formatSignal, withoutDisclaimer, type CliIo, type SignalLine } from './output.ts';
import type { Receipt } from './receipts.ts';

/**
 * `read`'s paging (read.ts sets it up): every page of entitled signals after `since`, then with
 * `--follow` a long-poll (or a polite poll against a server that does not hold reads) until the
 * bundle is used up or the read is stopped.
 */

const MAX_BACKOFF_S = 300;

export const buyMore = (city: string, server: string) =>
  `isocast buy --city ${city} --count 20${server === DEFAULT_SERVER ? '' : ` --server ${server}`}`;

export function exhausted(
  { paidThrough, latest }: { paidThrough: number; latest: number },
  { city, server }: { city: string; server: string },
): CliError {
  const what =
    paidThrough === 0
      ? `this wallet has no bundle for ${city} yet. Buy one with`
      : `bundle used up: entitled through seq ${paidThrough}, latest is ${latest}. Buy more with`;
  return new CliError(`${what}: ${buyMore(city, server)}`, EXIT.paymentNeeded);
}

function readProblem(a: ApiAnswer, city: string, server: string): CliError {
  if (a.status === 402 && typeof a.body.paid_through === 'number')
    return exhausted({ paidThrough: a.body.paid_through, latest: a.body.latest }, { city, server });
  if (a.status === 402)
    return new CliError(`the server did not accept the receipt: ${serverError(a)}`, EXIT.paymentNeeded);
  if (a.status === 401)
    return new CliError(`the server did not accept the receipt token: ${serverError(a)}`, EXIT.paymentNeeded);
  if (a.status === 403) return new CliError('this wallet is on a sanctions list; reads are refused');
  if (a.status === 404) return new CliError(`unknown city: ${city} (the list is at GET /v1/cities)`, EXIT.usage);
  return new CliError(`read failed with HTTP ${a.status}: ${serverError(a)}`);
}

/** What `read` was asked for, and what it reads with; read-follow.ts pages with it. */
type ReadSetup = {
  io: CliIo;
  city: string;
  server: string;
  since: number;
  follow: boolean;
  json: boolean;
  intervalMs: number;
  waitS: number;
  timeoutMs: number;
  client: ReturnType<typeof createClient>;
  sleep: NonNullable<CliIo['sleep']>;
  now: () => number;
  account: PrivateKeyAccount | undefined;
  receipt: Receipt;
  /** Recovers the receipt once with a wallet signature; null without a key or when none is found. */
  recover(): Promise<Receipt | null>;
  /** Whether `recover` has been tried. */
  recovered(): boolean;
};

/** What changes from one request to the next. */
type Progress = {
  since: number;
  headers: { authorization: string };
  printed: number;
  backoffMs: number;
  waitingSaid: boolean;
  offlineSaid: boolean;
  /** Caught up on the previous answer: the next request long-polls. */
  caughtUp: boolean;
  /** Until a long-poll comes back early with nothing new. */
  serverHolds: boolean;
};

type Page = { signals: SignalLine[]; paidThrough: number; latest: number };

const clock = (ms: number) => `${new Date(ms).toISOString().slice(11, 19)}Z`;

export async function followPages(r: ReadSetup): Promise<number> {
  const { io } = r;
  const p: Progress = {
    since: r.since,
    headers: { authorization: `Bearer ${r.receipt.receiptToken}` },
    printed: 0,
    backoffMs: r.intervalMs,
    waitingSaid: false,
    offlineSaid: false,
    caughtUp: false,
    serverHolds: true,
  };
  while (!io.signal?.aborted) {
    const held = r.follow && p.caughtUp && r.waitS > 0 && p.serverHolds;
    const askedAt = performance.now();
    const a = await ask(r, p, { held });
    if (a === 'stopped') break;
    if (a === 'again' || (await askAgain(r, p, a))) continue;
    const page = pageOf(r, p, a);
    for (const s of page.signals) {
      io.stdout(r.json ? JSON.stringify(s) : formatSignal(s));
      p.printed++;
    }
    if (page.signals.length > 0) p.waitingSaid = false;
    if (a.status === 200) p.since = a.body.next_cursor;
    if (a.status === 200 && a.body.more) continue;
    if (!r.follow) return summary(r, p, { answer: a, page });
    if (p.since >= page.paidThrough) throw exhausted(page, r);
    // A long-poll that came back early with nothing means this server does not hold reads (an
    // older one): from then on poll politely instead of asking again at once.
    if (held && page.signals.length === 0 && performance.now() - askedAt < r.waitS * 1000 - 1_000 && p.serverHolds) {
      p.serverHolds = false;
      p.waitingSaid = false;
    }
    p.caughtUp = true;
    await waitForMore(r, p, page);
  }
  io.stderr(`stopped after ${p.printed} signal(s); resume with --since ${p.since}`);
  return EXIT.ok;
}

/** One request; 'again' after a network failure a follower waits out, 'stopped' when aborted. */
async function ask(r: ReadSetup, p: Progress, { held }: { held: boolean }): Promise<ApiAnswer | 'again' | 'stopped'> {
  const { io } = r;
  let a: ApiAnswer;
  try {
    const path = `/v1/signals?city=${encodeURIComponent(r.city)}&since=${p.since}${held ? `&wait=${r.waitS}` : ''}`;
    a = await r.client.request('GET', path, {
      headers: p.headers,
      signal: io.signal,
      ...(held ? { timeoutMs: r.waitS * 1000 + r.timeoutMs } : {}),
    });
  } catch (err) {
    if (io.signal?.aborted) return 'stopped';
    if (!(r.follow && err instanceof NetworkError)) throw err;
    // A follower outlives server restarts: wait longer each time, never hammer, say it once.
    if (!p.offlineSaid) io.stderr(`warning: ${err.message}; retrying with growing waits (up to ${MAX_BACKOFF_S} s)`);
    p.offlineSaid = true;
    await r.sleep(p.backoffMs, io.signal);
    p.backoffMs = Math.min(p.backoffMs * 2, MAX_BACKOFF_S * 1000);
    return 'again';
  }
  if (p.offlineSaid) io.stderr(`reconnected to ${r.server}`);
  p.offlineSaid = false;
  p.backoffMs = r.intervalMs;
  return a;
}

/** A busy server (followers wait and ask again) or a refused token a signature may recover. */
async function askAgain(r: ReadSetup, p: Progress, a: ApiAnswer): Promise<boolean> {
  if (a.status === 429 || a.status === 503) {
    if (!r.follow) throw readProblem(a, r.city, r.server);
    await r.sleep(Math.max(r.intervalMs, a.retryAfterMs ?? 0), r.io.signal);
    return true;
  }
  const tokenRefused = a.status === 401 || (a.status === 402 && typeof a.body.paid_through !== 'number');
  if (tokenRefused && r.account && !r.recovered()) {
    const fresh = await r.recover();
    if (fresh) {
      p.headers = { authorization: `Bearer ${fresh.receiptToken}` };
      return true;
    }
  }
  return false;
}

function pageOf(r: ReadSetup, p: Progress, a: ApiAnswer): Page {
  if (a.status === 200)
    return { signals: a.body.signals as SignalLine[], paidThrough: a.body.paid_through, latest: a.body.latest };
  // Asking past the latest signal but inside the bundle: nothing new yet, not a used-up bundle.
  if (a.status === 402 && typeof a.body.paid_through === 'number' && p.since < a.body.paid_through)
    return { signals: [], paidThrough: a.body.paid_through, latest: a.body.latest };
  throw readProblem(a, r.city, r.server);
}

/** Without --follow: one closing line on stderr (JSON with --json). */
function summary(r: ReadSetup, p: Progress, { answer: a, page }: { answer: ApiAnswer; page: Page }): number {
  const { paidThrough, latest } = page;
  const none = p.printed === 0 && p.since >= latest;
  const note = none
    ? `no new signals yet: latest is seq ${latest}, entitled through seq ${paidThrough}; run again later or add --follow`
    : `${p.printed} signal(s); entitled through seq ${paidThrough}, latest ${latest}; next --since ${p.since}`;
  if (r.json)
    r.io.stderr(JSON.stringify({ ...withoutDisclaimer({ ...a.body, signals: undefined }), printed: p.printed }));
  else r.io.stderr(note);
  return EXIT.ok;
}

/** Says once that it is waiting; sleeps the interval unless the next request long-polls. */
async function waitForMore(r: ReadSetup, p: Progress, { paidThrough, latest }: Page): Promise<void> {
  const longPolling = r.waitS > 0 && p.serverHolds;
  if (!p.waitingSaid) {
    const left = paidThrough - p.since;
    const how = longPolling
      ? `the server answers as soon as one is stored (long-poll, up to ${r.waitS} s per request)`
      : `polling every ${r.intervalMs / 1000} s, next at ${clock(r.now() + r.intervalMs)}`;
    r.io.stderr(
      `waiting for new ${r.city} signals (${left} left in the bundle, latest seq ${latest}); ${how}. Ctrl-C stops`,
    );
    p.waitingSaid = true;
  }
  if (!longPolling) await r.sleep(r.intervalMs, r.io.signal);
}
