import type { PrivateKeyAccount } from 'viem/accounts';
import { intFlag, parseFlags } from '../../lib/flags.ts';
import { readRevocationAnswer } from '../../../packages/isocast-client/src/index.ts';
import { createClient, serverUrl, type Client } from './client.ts';
import { loadAccount } from './key.ts';
import { CliError, EXIT, type CliIo } from './output.ts';
import { forgetReceipts, receiptsFileFor } from './receipts.ts';
import { recoverReceipts, signedPost, signedRefusal } from './recover.ts';

/** `isocast receipt`: the wallet's receipt token back for a free signature; prints its cities, never the token. */
const RECEIPT_FLAGS = {
  strings: ['server', 'key-file', 'receipts', 'timeout'],
  booleans: ['json', 'insecure', 'revoke'],
} as const;

/** `--revoke`: one signature stops every token of the wallet at this server; its saved records are dropped. */
async function revoke(
  client: Client,
  account: PrivateKeyAccount,
  { file, nowMs, json, io }: { file: string; nowMs: number; json: boolean; io: CliIo },
) {
  const a = await signedPost(client, account, { kind: 'ReceiptRevocation', nowMs });
  const answer = readRevocationAnswer(a.status, a.body);
  if (!answer.ok && answer.reason === 'unsupported')
    throw new CliError(
      `${client.server} does not offer token revocation (POST /v1/receipts/revoke); it is an older isocast`,
    );
  if (!answer.ok) throw signedRefusal('revocation', answer);
  const { revoked } = answer.value;
  const forgotten = forgetReceipts(file, client.server, account.address);
  if (json) io.stdout(JSON.stringify({ wallet: account.address, server: client.server, revoked, forgotten }));
  else
    io.stdout(
      `revoked ${revoked} receipt token(s) of ${account.address} at ${client.server}; removed ${forgotten} saved record(s) from ${file}. ` +
        'Your entitlements are unchanged: isocast receipt gets a new token.',
    );
  return EXIT.ok;
}

export async function receiptCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, RECEIPT_FLAGS);
  const server = serverUrl(flags, io.envServer);
  const receiptsFile = receiptsFileFor(flags, io);
  const account = loadAccount(flags, io);
  const client = createClient(server, intFlag(flags, 'timeout', { fallback: 15, min: 1 }) * 1000);
  if (flags.on.has('revoke'))
    return revoke(client, account, {
      file: receiptsFile,
      nowMs: io.nowMs?.() ?? Date.now(),
      json: flags.on.has('json'),
      io,
    });
  const r = await recoverReceipts(client, account, { file: receiptsFile, nowMs: io.nowMs?.() ?? Date.now() });
  if (!r) throw new CliError(`${server} does not offer receipt recovery (POST /v1/receipts); it is an older isocast`);
  if (flags.on.has('json')) {
    io.stdout(JSON.stringify({ wallet: account.address, server, cities: r.cities, receiptsFile }));
  } else {
    io.stdout(`receipt for ${account.address} at ${server} saved to ${receiptsFile} (mode 0600)`);
    for (const c of r.cities) io.stdout(`  ${c.city}: entitled through seq ${c.paidThroughSeq}`);
  }
  return EXIT.ok;
}
