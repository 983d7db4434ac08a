import type { PrivateKeyAccount } from 'viem/accounts';
import { intFlag, parseFlags, requireValue, serverUrl } from './args.ts';
import { DEFAULT_SERVER } from './buy.ts';
import { createClient } from './client.ts';
import { loadAccount } from './key.ts';
import { CliError, defaultSleep, EXIT, type CliIo } from './output.ts';
import {
  describeServers,
  findReceipt,
  LEGACY_RECEIPTS_FILE,
  legacyReceiptsPresent,
  loadReceipts,
  receiptsFileFor,
  type Receipt,
} from './receipts.ts';
import { recoverReceipts } from './recover.ts';
import { buyMore, followPages } from './read-follow.ts';

/**
 * `isocast read --city <slug> [--since N] [--follow]`: pages through the entitled signals with
 * the saved receipt token (recovering it with a wallet signature when it is missing). `--follow`
 * then long-polls (`wait=--wait`, 25 s by default: the server answers as soon as a signal is
 * stored); against a server that answers at once anyway (an older one, or one holding
 * too many reads) it polls politely every --interval seconds (30 by default, longer when the
 * server asks with Retry-After or the network fails). It says once that it is waiting, prints
 * nothing more until a signal arrives, and ends when the bundle is used up or on Ctrl-C.
 */
const READ_FLAGS = {
  strings: ['city', 'since', 'server', 'receipts', 'key-file', 'interval', 'timeout', 'wait'],
  booleans: ['follow', 'json', 'insecure'],
} as const;
const DEFAULT_INTERVAL_S = 30;
/** The server's longest hold (payments/bundle.ts MAX_WAIT_S). */
const DEFAULT_WAIT_S = 25;
const MIN_INTERVAL_S = 1;

export async function readCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, READ_FLAGS);
  const city = requireValue(flags, 'city');
  const server = serverUrl(flags, DEFAULT_SERVER, io.envServer);
  const since = intFlag(flags, 'since', { fallback: 0 });
  const follow = flags.on.has('follow');
  const json = flags.on.has('json');
  const intervalMs = intFlag(flags, 'interval', { fallback: DEFAULT_INTERVAL_S, min: MIN_INTERVAL_S }) * 1000;
  const waitS = intFlag(flags, 'wait', { fallback: DEFAULT_WAIT_S });
  if (waitS > DEFAULT_WAIT_S) throw new CliError(`--wait must be at most ${DEFAULT_WAIT_S} seconds`, EXIT.usage);
  const timeoutMs = intFlag(flags, 'timeout', { fallback: 15, min: 1 }) * 1000;
  const receiptsFile = receiptsFileFor(flags, io);
  const client = createClient(server, timeoutMs);
  const now = () => io.nowMs?.() ?? Date.now();
  // With a key at hand, read with that wallet's receipt; without one, the newest receipt will do.
  const keyed = flags.values['key-file'] !== undefined || io.envKey !== undefined;
  const account = keyed ? loadAccount({ keyFile: flags.values['key-file'], envKey: io.envKey }).account : undefined;
  const all = loadReceipts(receiptsFile);
  let recoveredOnce = false;
  // A lost, never-made or no longer recognised receipt: one signature recovers the token (no payment).
  const recover = async (): Promise<Receipt | null> => {
    recoveredOnce = true;
    const recovered = account ? await recoverReceipts(client, account, { file: receiptsFile, nowMs: now() }) : null;
    if (!recovered || !account) return null;
    if (!json)
      io.stderr(
        `recovered the receipt for ${account.address} from ${server} (${recovered.cities.map((c) => c.city).join(', ')}); saved to ${receiptsFile}`,
      );
    return findReceipt(recovered.receipts, { server, city, wallet: account.address });
  };
  let receipt = findReceipt(all, { server, city, wallet: account?.address });
  if (!receipt && account) receipt = await recover();
  if (!receipt) throw noReceipt({ all, server, city, account, receiptsFile });
  const sleep = io.sleep ?? defaultSleep;
  const setup = { io, city, server, since, follow, json, intervalMs, waitS, timeoutMs, client, sleep, now, account };
  return followPages({ ...setup, receipt, recover, recovered: () => recoveredOnce });
}

function noReceipt(o: {
  all: Receipt[];
  server: string;
  city: string;
  account: PrivateKeyAccount | undefined;
  receiptsFile: string;
}): CliError {
  const { all, server, city, account, receiptsFile } = o;
  const elsewhere = all.length > 0 ? ` Receipts in that file are for: ${describeServers(all)}.` : '';
  const legacy = legacyReceiptsPresent()
    ? ` An older receipts file exists at ./${LEGACY_RECEIPTS_FILE}; use it with --receipts ${LEGACY_RECEIPTS_FILE}.`
    : '';
  const hint = account ? '' : ' With your key (--key-file or ISOCAST_KEY) a lost receipt is recovered automatically.';
  return new CliError(
    `no receipt for ${server}${account ? ` and wallet ${account.address}` : ''} in ${receiptsFile}.${elsewhere}${legacy}${hint} ` +
      `To buy: ${buyMore(city, server)}`,
    EXIT.paymentNeeded,
  );
}
