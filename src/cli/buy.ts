import { payFor402 } from '../buyer/pay.ts';
import { intFlag, parseFlags, requireValue, serverUrl, UsageError } from './args.ts';
import { createClient, serverError, type ApiAnswer } from './client.ts';
import { loadAccount } from './key.ts';
import { CliError, EXIT, withoutDisclaimer, type CliIo } from './output.ts';
import { DEFAULT_RECEIPTS_FILE, saveReceipt } from './receipts.ts';

/**
 * `isocast buy --city <slug> --count <n>`: ask for the 402, bind the nonce to (payer, city,
 * count) with the served salt, sign the EIP-3009 authorization, pay, and keep the receipt token.
 */
export const DEFAULT_SERVER = 'http://localhost:8402';
export const BUY_FLAGS = { strings: ['city', 'count', 'server', 'key-file', 'receipts', 'timeout'], booleans: ['json'] } as const;

function challengeProblem(a: ApiAnswer, city: string): CliError {
  if (a.status === 404) return new CliError(`unknown city: ${city} (the list is at GET /v1/cities)`);
  if (a.status === 400) return new CliError(`the server refused this bundle: ${serverError(a)}${typeof a.body.minSpendUsd === 'number' ? ` (minimum spend ${a.body.minSpendUsd} USDC)` : ''}`, EXIT.usage);
  if (a.status === 503) return new CliError(`the server cannot take payments now: ${serverError(a)}; nothing was charged, try again later`);
  return new CliError(`expected a 402 payment challenge, got HTTP ${a.status}: ${serverError(a)}`);
}

function paymentProblem(a: ApiAnswer, wallet: string): CliError {
  switch (a.status) {
    case 402: return new CliError(`payment refused: ${serverError(a)}${/not charged/.test(serverError(a)) ? '' : '; you were not charged'}`);
    case 403: return new CliError(`wallet ${wallet} is on a sanctions list; payment refused and nothing was charged`);
    case 404: return new CliError('unknown city (the list is at GET /v1/cities)');
    case 502: return new CliError(`${serverError(a)}: your payment was taken but could not be applied; a refund is queued`);
    case 503: return new CliError(`${serverError(a)}; nothing was charged, try again later`);
    default: return new CliError(`payment failed with HTTP ${a.status}: ${serverError(a)}`);
  }
}

export async function buyCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, BUY_FLAGS);
  const city = requireValue(flags, 'city');
  const count = intFlag(flags, 'count', Number.NaN, 2);
  if (Number.isNaN(count)) throw new UsageError('--count is required (an integer of at least 2)');
  const server = serverUrl(flags, DEFAULT_SERVER);
  const receiptsFile = flags.values.receipts ?? DEFAULT_RECEIPTS_FILE;
  const json = flags.on.has('json');
  const { account, warning } = loadAccount({ keyFile: flags.values['key-file'], envKey: io.envKey });
  if (warning) io.stderr(`warning: ${warning}`);
  const client = createClient(server, intFlag(flags, 'timeout', 15, 1) * 1000);
  const path = `/v1/subscribe?city=${encodeURIComponent(city)}&count=${count}`;

  const challenge = await client.request('POST', path);
  if (challenge.status !== 402) throw challengeProblem(challenge, city);
  const accept = challenge.body.accepts?.[0];
  // A mock server's authorization is still a valid real one on Base: whoever holds it could submit it.
  if (challenge.body.extra?.mode === 'mock') io.stderr('warning: this server runs in mock payment mode (a demo): sign only with a wallet that holds no real USDC');
  if (!json) io.stderr(`402 challenge: ${accept?.price ?? '?'} USDC to ${accept?.payTo ?? '?'} on ${accept?.network ?? '?'} for ${count} ${city} signals; signing as ${account.address}`);
  let payment;
  try {
    payment = await payFor402(challenge.body, account, { nowMs: io.nowMs?.() });
  } catch (err) {
    throw new CliError(`cannot pay this challenge: ${(err as Error).message}`);
  }
  if (payment.city !== city || payment.count !== count) throw new CliError(`the challenge binds ${payment.count} ${payment.city} signals, not ${count} ${city}; refusing to sign it`);

  const paid = await client.request('POST', path, { headers: { 'x-payment': payment.xPayment } });
  if (paid.status !== 200) throw paymentProblem(paid, account.address);
  const r = paid.body;
  saveReceipt(receiptsFile, {
    server, wallet: account.address, city, receiptToken: String(r.receiptToken), paidThroughSeq: r.paidThroughSeq, latestSeq: r.latestSeq,
    count: r.count, amountUsd: r.amountUsd, txHash: r.txHash ?? null, savedAt: new Date(io.nowMs?.() ?? Date.now()).toISOString(),
  });
  if (json) {
    const { receiptToken: _secret, ...shown } = withoutDisclaimer(r);
    io.stdout(JSON.stringify({ ...shown, wallet: account.address, receiptsFile }));
  } else {
    io.stdout(`bought ${r.count} ${city} signals at ${r.unitPriceUsd} USDC each (${r.amountUsd} USDC)${r.idempotent ? ' [already applied earlier: nothing charged twice]' : ''}`);
    io.stdout(`entitled through seq ${r.paidThroughSeq} (latest now ${r.latestSeq}); tx ${r.txHash ?? 'n/a'}`);
    io.stdout(`receipt saved to ${receiptsFile} (mode 0600); read with: isocast read --city ${city}${server === DEFAULT_SERVER ? '' : ` --server ${server}`}`);
  }
  return EXIT.ok;
}
