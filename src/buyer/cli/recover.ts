import type { PrivateKeyAccount } from 'viem/accounts';
import { RECEIPT_REQUEST_DOMAIN, RECEIPT_REQUEST_PRIMARY_TYPE, RECEIPT_REQUEST_TYPES } from '../receipt-request.ts';
import { serverError, type Client } from './client.ts';
import { CliError, EXIT } from './output.ts';
import { saveReceipts, type Receipt } from './receipts.ts';

/**
 * Receipt recovery: the wallet signs ReceiptRequest(wallet, timestamp) and `POST /v1/receipts`
 * answers with a fresh receipt token and the wallet's entitlements per city. The token is saved
 * as one record per city, so a lost receipts file (or a new machine) costs one signature, not a
 * purchase. Returns null when the server has no such endpoint (an older isocast).
 */
export type Recovered = { receipts: Receipt[]; cities: { city: string; paidThroughSeq: number }[] };

async function ask(client: Client, account: PrivateKeyAccount, timestamp: number) {
  const signature = await account.signTypedData({
    domain: RECEIPT_REQUEST_DOMAIN,
    types: RECEIPT_REQUEST_TYPES,
    primaryType: RECEIPT_REQUEST_PRIMARY_TYPE,
    message: { wallet: account.address, timestamp: BigInt(timestamp) },
  });
  return client.request('POST', '/v1/receipts', { body: { wallet: account.address, timestamp, signature } });
}

export async function recoverReceipts(
  client: Client,
  account: PrivateKeyAccount,
  file: string,
  nowMs: number,
): Promise<Recovered | null> {
  const timestamp = Math.floor(nowMs / 1000);
  let a = await ask(client, account, timestamp);
  // Signatures are deterministic: a second request in the same second is the same signature, which
  // the server treats as a replay (no token, or "already used"). One second later is a new one.
  const replayed = (x: typeof a) =>
    (x.status === 200 && !x.body.receiptToken) || (x.status === 401 && /already used/.test(String(x.body.error)));
  if (replayed(a)) a = await ask(client, account, timestamp + 1);
  if (a.status === 404 && /no purchases/.test(String(a.body.error))) {
    throw new CliError(
      `${client.server} has no purchases for wallet ${account.address}; buy first: isocast buy --city <slug> --count 20`,
      EXIT.paymentNeeded,
    );
  }
  if (a.status === 404 || a.status === 405) return null;
  if (a.status === 401) {
    throw new CliError(
      `receipt recovery refused: ${serverError(a)}${/stale/.test(serverError(a)) ? " (check this machine's clock)" : ''}`,
    );
  }
  if (a.status !== 200) throw new CliError(`receipt recovery failed with HTTP ${a.status}: ${serverError(a)}`);
  if (typeof a.body.receiptToken !== 'string' || a.body.receiptToken === '') {
    throw new CliError(
      'the server answered the receipt request without a token (a replayed request); run isocast receipt again in a second',
    );
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
