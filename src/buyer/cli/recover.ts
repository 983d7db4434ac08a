import type { PrivateKeyAccount } from 'viem/accounts';
import { originOf, receiptTypedData } from '../receipt-request.ts';
import { serverError, type ApiAnswer, type Client } from './client.ts';
import { CliError, EXIT } from './output.ts';
import { saveReceipts, type Receipt } from './receipts.ts';

/**
 * Receipt recovery: the wallet signs ReceiptRequest(wallet, origin, timestamp) for the origin of
 * the server it talks to, and `POST /v1/receipts` answers with a fresh receipt token and the
 * wallet's entitlements per city. The token is saved as one record per city, so a lost receipts
 * file (or a new machine) costs one signature, not a purchase. Returns null when the server has no
 * such endpoint (an older isocast). Never signs a second request on its own: "signature already
 * used" means something else sent this signature first, and the user decides (issue 23 item 5).
 */
export type Recovered = { receipts: Receipt[]; cities: { city: string; paidThroughSeq: number }[] };

/** Signs `kind` for this client's server and posts it; the origin goes in the body too, so a refusal can say which one the server is. */
export async function signedPost(
  client: Client,
  account: PrivateKeyAccount,
  kind: 'ReceiptRequest' | 'ReceiptRevocation',
  path: string,
  timestamp: number,
) {
  const origin = originOf(client.server);
  const signature = await account.signTypedData(receiptTypedData(kind, account.address, origin, timestamp));
  return client.request('POST', path, { body: { wallet: account.address, origin, timestamp, signature } });
}

/** The refusal of a signed receipt request, in words a buyer can act on. */
export function signedRefusal(what: string, a: ApiAnswer): CliError {
  const err = serverError(a);
  if (/already used/.test(err))
    return new CliError(
      `${what} refused: signature already used. This exact signed request reached the server before; if you did not send it ` +
        '(or another isocast run in the same second did not), a copy of your signature was used: run isocast receipt --revoke. ' +
        'Otherwise run the command again in a second (a new timestamp is a new signature).',
    );
  if (/stale/.test(err)) return new CliError(`${what} refused: ${err} (check this machine's clock)`);
  return new CliError(`${what} refused: ${err}`);
}

export async function recoverReceipts(
  client: Client,
  account: PrivateKeyAccount,
  file: string,
  nowMs: number,
): Promise<Recovered | null> {
  const a = await signedPost(client, account, 'ReceiptRequest', '/v1/receipts', Math.floor(nowMs / 1000));
  if (a.status === 404 && /no purchases/.test(String(a.body.error))) {
    throw new CliError(
      `${client.server} has no purchases for wallet ${account.address}; buy first: isocast buy --city <slug> --count 20`,
      EXIT.paymentNeeded,
    );
  }
  if (a.status === 404 || a.status === 405) return null;
  if (a.status === 401) throw signedRefusal('receipt recovery', a);
  if (a.status !== 200) throw new CliError(`receipt recovery failed with HTTP ${a.status}: ${serverError(a)}`);
  if (typeof a.body.receiptToken !== 'string' || a.body.receiptToken === '') {
    throw new CliError('the server answered the receipt request without a token; nothing was saved');
  }
  const cities = (Array.isArray(a.body.cities) ? a.body.cities : [])
    .filter(
      (c: { city?: unknown; paidThroughSeq?: unknown } | null) =>
        typeof c?.city === 'string' && Number.isSafeInteger(c?.paidThroughSeq),
    )
    .map((c: { city: string; paidThroughSeq: number }) => ({ city: c.city, paidThroughSeq: c.paidThroughSeq }));
  const savedAt = new Date(nowMs).toISOString();
  const receipts: Receipt[] = cities.map((c) => ({
    server: client.server,
    wallet: account.address,
    city: c.city,
    receiptToken: a.body.receiptToken as string,
    paidThroughSeq: c.paidThroughSeq,
    source: 'recovered',
    savedAt,
  }));
  if (receipts.length > 0) saveReceipts(file, receipts);
  return { receipts, cities };
}
