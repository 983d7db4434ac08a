import type { PrivateKeyAccount } from 'viem/accounts';
import {
  type ReceiptFailure,
  type ReceiptSignedKind,
  readReceiptAnswer,
  signReceiptBody,
} from '../../../packages/isocast-client/src/index.ts';
import type { Client } from './client.ts';
import { CliError, EXIT } from './output.ts';
import { saveReceipts, type Receipt } from './receipts.ts';

/**
 * Receipt recovery for the CLI: the package's signed request and answer reader, saved as records
 * and worded as messages. Never signs a second request on its own: "signature already used" means
 * something else sent this signature first, and the user decides.
 */
type Recovered = { receipts: Receipt[]; cities: { city: string; paidThroughSeq: number }[] };

/** Signs `kind` for this client's server and posts it to its endpoint. */
export async function signedPost(
  client: Client,
  account: PrivateKeyAccount,
  o: { kind: ReceiptSignedKind; nowMs: number },
) {
  const body = await signReceiptBody(account, {
    server: client.server,
    kind: o.kind,
    timestampS: Math.floor(o.nowMs / 1000),
  });
  return client.request('POST', o.kind === 'ReceiptRequest' ? '/v1/receipts' : '/v1/receipts/revoke', { body });
}

/** A signed receipt request the server did not grant, in words a buyer can act on. */
export function signedRefusal(what: string, f: { reason: ReceiptFailure; status: number; error: string }): CliError {
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
): Promise<Recovered | null> {
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
