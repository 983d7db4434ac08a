import { intFlag, parseFlags, serverUrl } from './args.ts';
import { DEFAULT_SERVER } from './buy.ts';
import { createClient } from './client.ts';
import { loadAccount } from './key.ts';
import { CliError, EXIT, type CliIo } from './output.ts';
import { receiptsFileFor } from './paths.ts';
import { recoverReceipts } from './recover.ts';

/**
 * `isocast receipt`: recover this wallet's receipt token from the server with a signature (free,
 * nothing is paid) and save it for every city the wallet has bought; prints the cities and their
 * entitlement ceilings, never the token.
 */
export const RECEIPT_FLAGS = {
  strings: ['server', 'key-file', 'receipts', 'timeout'],
  booleans: ['json', 'insecure'],
} as const;

export async function receiptCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, RECEIPT_FLAGS);
  const server = serverUrl(flags, DEFAULT_SERVER);
  const receiptsFile = receiptsFileFor(flags, io);
  const { account, warning } = loadAccount({ keyFile: flags.values['key-file'], envKey: io.envKey });
  if (warning) io.stderr(`warning: ${warning}`);
  const client = createClient(server, intFlag(flags, 'timeout', 15, 1) * 1000);
  const r = await recoverReceipts(client, account, receiptsFile, io.nowMs?.() ?? Date.now());
  if (!r) throw new CliError(`${server} does not offer receipt recovery (POST /v1/receipts); it is an older isocast`);
  if (flags.on.has('json')) {
    io.stdout(JSON.stringify({ wallet: account.address, server, cities: r.cities, receiptsFile }));
  } else {
    io.stdout(`receipt for ${account.address} at ${server} saved to ${receiptsFile} (mode 0600)`);
    for (const c of r.cities) io.stdout(`  ${c.city}: entitled through seq ${c.paidThroughSeq}`);
  }
  return EXIT.ok;
}
