import type { PrivateKeyAccount } from 'viem/accounts';
import { intFlag, parseFlags } from '../../lib/flags.ts';
import {
  type ReceiptFailure,
  type ReceiptSignedKind,
  readReceiptAnswer,
  readRevocationAnswer,
  signReceiptBody,
} from '../../../packages/isocast-client/src/index.ts';
import { createClient, serverUrl, type Client } from './client.ts';
import { loadAccount } from './key.ts';
import { CliError, EXIT, type CliIo } from './output.ts';
import { forgetReceipts, receiptsFileFor, saveReceipts, type Receipt } from './receipts.ts';

/** Never signs a second request on its own: "signature already used" means something else sent it first. */

/** Signs `kind` for this client's server and posts it to its endpoint. */
async function signedPost(client: Client, account: PrivateKeyAccount, o: { kind: ReceiptSignedKind; nowMs: number }) {
  const body = await signReceiptBody(account, {
    server: client.server,
    kind: o.kind,
    timestampS: Math.floor(o.nowMs / 1000),
  });
  return client.request('POST', o.kind === 'ReceiptRequest' ? '/v1/receipts' : '/v1/receipts/revoke', { body });
}

/** A signed receipt request the server did not grant, in words a buyer can act on. */
function signedRefusal(what: string, f: { reason: ReceiptFailure; status: number; error: string }): CliError {
  if (f.reason === 'signature-used')
    return new CliError(
      `${what} refused: signature already used. This exact signed request reached the server before; if you did not send it ` +
        '(or another isocast run in the same second did not), a copy of your signature was used: run isocast receipt --revoke. ' +
        'Otherwise run the command again in a second (a new timestamp is a new signature).',
    );
  if (f.reason === 'clock') return new CliError(`${what} refused: ${f.error} (check this machine's clock)`);
  if (f.status === 401) return new CliError(`${what} refused: ${f.error}`);
  return new CliError(`${what} failed with HTTP ${f.status}: ${f.error}`);
}

/** null when the server has no such endpoint (an older isocast). */
export async function recoverReceipts(
  client: Client,
  account: PrivateKeyAccount,
  { file, nowMs }: { file: string; nowMs: number },
) {
  const a = await signedPost(client, account, { kind: 'ReceiptRequest', nowMs });
  const answer = readReceiptAnswer(a.status, a.body);
  if (!answer.ok) {
    if (answer.reason === 'no-purchases')
      throw new CliError(
        `${client.server} has no purchases for wallet ${account.address}; buy first: isocast buy --city <slug> --count 20`,
        EXIT.paymentNeeded,
      );
    if (answer.reason === 'unsupported') return null;
    if (a.status === 200) throw new CliError(`${answer.error}; nothing was saved`);
    throw signedRefusal('receipt recovery', answer);
  }
  const { receiptToken, cities } = answer.value;
  const savedAt = new Date(nowMs).toISOString();
  const receipts: Receipt[] = cities.map((c) => ({
    server: client.server,
    wallet: account.address,
    city: c.city,
    receiptToken,
    paidThroughSeq: c.paidThroughSeq,
    source: 'recovered',
    savedAt,
  }));
  if (receipts.length > 0) saveReceipts(file, receipts);
  return { receipts, cities };
}

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
  const nowMs = io.nowMs?.() ?? Date.now();
  const json = flags.on.has('json');
  if (flags.on.has('revoke')) return revoke(client, account, { file: receiptsFile, nowMs, json, io });
  const r = await recoverReceipts(client, account, { file: receiptsFile, nowMs });
  if (!r) throw new CliError(`${server} does not offer receipt recovery (POST /v1/receipts); it is an older isocast`);
  if (json) {
    io.stdout(JSON.stringify({ wallet: account.address, server, cities: r.cities, receiptsFile }));
  } else {
    io.stdout(`receipt for ${account.address} at ${server} saved to ${receiptsFile} (mode 0600)`);
    for (const c of r.cities) io.stdout(`  ${c.city}: entitled through seq ${c.paidThroughSeq}`);
  }
  return EXIT.ok;
}
