import { intFlag, parseFlags, requireValue, serverUrl } from './args.ts';
import { DEFAULT_SERVER } from './buy.ts';
import { createClient, NetworkError, serverError, type ApiAnswer } from './client.ts';
import { loadAccount } from './key.ts';
import { CliError, defaultSleep, EXIT, formatSignal, withoutDisclaimer, type CliIo, type SignalLine } from './output.ts';
import { DEFAULT_RECEIPTS_FILE, findReceipt, loadReceipts } from './receipts.ts';

/**
 * `isocast read --city <slug> [--since N] [--follow]`: pages through the entitled signals with
 * the saved receipt token. `--follow` then keeps polling politely (every --interval seconds,
 * 30 by default, longer when the server asks with Retry-After or the network fails) and prints
 * new signals as they come, until the bundle is used up or the command is interrupted.
 */
export const READ_FLAGS = { strings: ['city', 'since', 'server', 'receipts', 'key-file', 'interval', 'timeout'], booleans: ['follow', 'json'] } as const;
export const DEFAULT_INTERVAL_S = 30;
const MIN_INTERVAL_S = 1;
const MAX_BACKOFF_S = 300;

function exhausted(a: ApiAnswer, city: string): CliError {
  return new CliError(`bundle used up: entitled through seq ${a.body.paid_through}, latest is ${a.body.latest}. `
    + `Buy more with: isocast buy --city ${city} --count 20`, EXIT.paymentNeeded);
}

function readProblem(a: ApiAnswer, city: string): CliError {
  if (a.status === 402 && typeof a.body.paid_through === 'number') return exhausted(a, city);
  if (a.status === 402) return new CliError(`the server did not accept the receipt: ${serverError(a)}`, EXIT.paymentNeeded);
  if (a.status === 403) return new CliError('this wallet is on a sanctions list; reads are refused');
  if (a.status === 404) return new CliError(`unknown city: ${city} (the list is at GET /v1/cities)`);
  return new CliError(`read failed with HTTP ${a.status}: ${serverError(a)}`);
}

export async function readCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, READ_FLAGS);
  const city = requireValue(flags, 'city');
  const server = serverUrl(flags, DEFAULT_SERVER);
  let since = intFlag(flags, 'since', 0, 0);
  const follow = flags.on.has('follow');
  const json = flags.on.has('json');
  const intervalMs = intFlag(flags, 'interval', DEFAULT_INTERVAL_S, MIN_INTERVAL_S) * 1000;
  const receiptsFile = flags.values.receipts ?? DEFAULT_RECEIPTS_FILE;
  // With a key at hand, read with that wallet's receipt; without one, the newest receipt will do.
  const keyed = flags.values['key-file'] !== undefined || io.envKey !== undefined;
  const wallet = keyed ? loadAccount({ keyFile: flags.values['key-file'], envKey: io.envKey }).account.address : undefined;
  const receipt = findReceipt(loadReceipts(receiptsFile), server, city, wallet);
  if (!receipt) {
    throw new CliError(`no receipt for ${server}${wallet ? ` and wallet ${wallet}` : ''} in ${receiptsFile}; buy first: isocast buy --city ${city} --count 20`, EXIT.paymentNeeded);
  }
  const client = createClient(server, intFlag(flags, 'timeout', 15, 1) * 1000);
  const sleep = io.sleep ?? defaultSleep;
  const headers = { authorization: `Bearer ${receipt.receiptToken}` };
  let printed = 0;
  let backoffMs = intervalMs;

  while (!io.signal?.aborted) {
    let a: ApiAnswer;
    try {
      a = await client.request('GET', `/v1/signals?city=${encodeURIComponent(city)}&since=${since}`, { headers });
    } catch (err) {
      if (!(follow && err instanceof NetworkError)) throw err;
      // A follower outlives server restarts: wait longer each time, never hammer.
      io.stderr(`warning: ${err.message}; retrying in ${Math.round(backoffMs / 1000)} s`);
      await sleep(backoffMs, io.signal);
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_S * 1000);
      continue;
    }
    backoffMs = intervalMs;
    if (a.status === 429 || a.status === 503) {
      if (!follow) throw readProblem(a, city);
      await sleep(Math.max(intervalMs, a.retryAfterMs ?? 0), io.signal);
      continue;
    }
    if (a.status !== 200) throw readProblem(a, city);
    for (const s of a.body.signals as SignalLine[]) {
      io.stdout(json ? JSON.stringify(s) : formatSignal(s));
      printed++;
    }
    since = a.body.next_cursor;
    if (a.body.more) continue;
    if (!follow) {
      const note = `${printed} signal(s); entitled through seq ${a.body.paid_through}, latest ${a.body.latest}; next --since ${since}`;
      if (json) io.stderr(JSON.stringify({ ...withoutDisclaimer({ ...a.body, signals: undefined }), printed }));
      else io.stderr(note);
      return EXIT.ok;
    }
    if (since >= a.body.paid_through) throw exhausted({ ...a, body: { paid_through: a.body.paid_through, latest: a.body.latest } }, city);
    await sleep(intervalMs, io.signal);
  }
  io.stderr(`stopped after ${printed} signal(s); resume with --since ${since}`);
  return EXIT.ok;
}
