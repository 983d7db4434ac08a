import {
  ChallengeRefused,
  formatAtomic,
  PaymentDeclined,
  type Payment,
  payFor402,
  serverErrorText,
  tierProblem,
  usdToAtomic,
} from '../../../packages/isocast-client/src/index.ts';
import { pending } from '../../../packages/isocast-client/src/mcp/buy.ts';
import { DEFAULT_SERVER } from '../../../packages/isocast-client/src/mcp/config.ts';
import { intFlag, parseFlags, requireValue, UsageError } from '../../lib/flags.ts';
import { type ApiAnswer, type Client, createClient, refusal, serverFlags, serverUrl, unknownCity } from './client.ts';
import { loadAccount } from './key.ts';
import { CliError, defaultSleep, EXIT, withoutDisclaimer, type CliIo } from './output.ts';
import { receiptsFileFor, saveReceipts } from './receipts.ts';

/** `isocast buy`: the 402 must match the published payTo and tiers and the built-in tier table before a signature. */
const BUY_FLAGS = serverFlags(['city', 'count', 'key-file', 'receipts', 'max-usd'], ['yes']);
/** In-doubt settlement (503 "settlement pending"): resend the same header at most this often, this long. */
const PENDING_RETRIES = 6;
const PENDING_MAX_WAIT_MS = 30_000;

function challengeProblem(a: ApiAnswer, city: string): CliError {
  const e = serverErrorText(a.status, a.body);
  const min = typeof a.body.minSpendUsd === 'number' ? ` (minimum spend ${a.body.minSpendUsd} USDC)` : '';
  return refusal(
    a,
    {
      404: [unknownCity(city), EXIT.usage],
      400: [`the server refused this bundle: ${e}${min}`, EXIT.usage],
      503: `the server cannot take payments now: ${e}; nothing was charged, try again later`,
    },
    `expected a 402 payment challenge, got HTTP ${a.status}: ${e}`,
  );
}

function paymentProblem(a: ApiAnswer, wallet: string): CliError {
  const e = serverErrorText(a.status, a.body);
  return refusal(
    a,
    {
      402: `payment refused: ${e}${/not charged/.test(e) ? '' : '; you were not charged'}`,
      403: `wallet ${wallet} is on a sanctions list; payment refused and nothing was charged`,
      404: ['unknown city (the list is at GET /v1/cities)', EXIT.usage],
      502: `${e}: your payment was taken but could not be applied; a refund is queued`,
      503: `${e}; nothing was charged, try again later`,
    },
    `payment failed with HTTP ${a.status}: ${e}`,
  );
}

/** The published settlement wallet and tiers; a server that will not say whom it wants paid is not paid. */
async function publishedTerms(client: Client, city: string): Promise<{ payTo: string }> {
  const meta = await client.request('GET', `/v1/signals/meta?city=${encodeURIComponent(city)}`);
  if (meta.status === 404) throw new CliError(unknownCity(city), EXIT.usage);
  if (meta.status !== 200)
    throw new CliError(
      `cannot read the price list (GET /v1/signals/meta answered HTTP ${meta.status}: ${serverErrorText(meta.status, meta.body)}); nothing was signed`,
    );
  if (typeof meta.body.payTo !== 'string')
    throw new CliError('the server publishes no settlement wallet (payTo); nothing was signed');
  const tiers = tierProblem(meta.body.tiers);
  if (tiers) throw new CliError(`${tiers}; nothing was signed`);
  return { payTo: meta.body.payTo };
}

/** Sends the signed header; an in-doubt settlement is retried with the SAME header, never a new signature. */
async function pay(
  client: Client,
  path: string,
  { xPayment, io, json }: { xPayment: string; io: CliIo; json: boolean },
): Promise<{ answer: ApiAnswer; retried: boolean }> {
  const sleep = io.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    const answer = await client.request('POST', path, { headers: { 'x-payment': xPayment } });
    if (!pending(answer) || attempt >= PENDING_RETRIES || io.signal?.aborted) {
      if (pending(answer)) {
        throw new CliError(
          `settlement still pending after ${attempt + 1} tries; run the same purchase later or check with: isocast receipt --server ${client.server}. ` +
            'The signed authorization can be charged at most once',
        );
      }
      return { answer, retried: attempt > 0 };
    }
    const waitMs = Math.min(
      PENDING_MAX_WAIT_MS,
      Math.max(1000, answer.retryAfterMs ?? (Number(answer.body.retryAfterSeconds) * 1000 || 2000)),
    );
    if (!json)
      io.stderr(
        `settlement pending; resending the same authorization in ${Math.round(waitMs / 1000)} s (you will not be charged twice)`,
      );
    await sleep(waitMs, io.signal);
  }
}

export async function buyCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, BUY_FLAGS);
  const city = requireValue(flags, 'city');
  const count = intFlag(flags, 'count', { fallback: Number.NaN, min: 2 });
  if (Number.isNaN(count)) throw new UsageError('--count is required (an integer of at least 2)');
  const server = serverUrl(flags, io.envServer);
  const maxUsd = flags.values['max-usd'];
  const maxAtomic = maxUsd === undefined ? undefined : usdToAtomic(maxUsd);
  if (maxAtomic === null || maxAtomic === 0n)
    throw new UsageError(`--max-usd must be a positive USD amount such as 0.10, got ${maxUsd}`);
  const receiptsFile = receiptsFileFor(flags, io);
  const json = flags.on.has('json');
  const account = loadAccount(flags, io);
  const client = createClient(server, intFlag(flags, 'timeout', { fallback: 15, min: 1 }) * 1000);
  const path = `/v1/subscribe?city=${encodeURIComponent(city)}&count=${count}`;

  const { payTo } = await publishedTerms(client, city);
  const challenge = await client.request('POST', path);
  if (challenge.status !== 402) throw challengeProblem(challenge, city);
  // A mock server's authorization is still a valid real one on Base: whoever holds it could submit it.
  if (challenge.body.extra?.mode === 'mock')
    io.stderr(
      'warning: this server runs in mock payment mode (a demo): sign only with a wallet that holds no real USDC',
    );
  const describe = (amountAtomic: bigint, to: string) =>
    `${formatAtomic(amountAtomic)} USDC to ${to} on Base for ${count} ${city} signals, from ${account.address}`;
  const ask = io.confirm && !flags.on.has('yes') ? io.confirm : undefined;
  let payment: Payment;
  try {
    payment = await payFor402(challenge.raw, account, {
      nowMs: io.nowMs?.(),
      expect: { city, count, payTo, ...(maxAtomic ? { maxAtomic, capName: '--max-usd cap' } : {}) },
      // The question comes after the checks and before the signature: a declined payment was never signed.
      ...(ask ? { confirm: (p) => ask(`Pay ${describe(p.amountAtomic, p.payTo)}? [y/N] `) } : {}),
    });
  } catch (err) {
    if (err instanceof PaymentDeclined) throw new CliError('not paid: nothing was signed or sent');
    const why = err instanceof ChallengeRefused ? err.message : `cannot pay this challenge: ${(err as Error).message}`;
    throw new CliError(`${why}; nothing was signed or sent`);
  }
  if (!ask && !json) io.stderr(`paying ${describe(payment.amountAtomic, payment.payTo)}`);

  const { answer: paid, retried } = await pay(client, path, { xPayment: payment.xPayment, io, json });
  if (paid.status !== 200) throw paymentProblem(paid, account.address);
  const r = paid.body;
  if (typeof r.receiptToken === 'string' && r.receiptToken !== '') {
    saveReceipts(receiptsFile, [
      {
        server,
        wallet: account.address,
        city,
        receiptToken: r.receiptToken,
        paidThroughSeq: r.paidThroughSeq,
        latestSeq: r.latestSeq,
        count: r.count,
        amountUsd: r.amountUsd,
        txHash: r.txHash ?? null,
        source: 'purchase',
        savedAt: new Date(io.nowMs?.() ?? Date.now()).toISOString(),
      },
    ]);
  }
  // The server has seen this authorization's nonce before: nothing new was bought. After our own
  // in-doubt retry that is the purchase we just made; otherwise it is an earlier one.
  if (r.idempotent === true && !retried) {
    throw new CliError(
      `already bought with this authorization: ${count} ${city} signals were bought from ${account.address} moments ago ` +
        `with the same binding; nothing was charged now and no signals were added (entitled through seq ${r.paidThroughSeq}). ` +
        'To buy another bundle, run buy again in a minute (a new challenge window)',
    );
  }
  if (json) {
    const { receiptToken: _secret, ...shown } = withoutDisclaimer(r);
    io.stdout(JSON.stringify({ ...shown, wallet: account.address, receiptsFile }));
  } else {
    io.stdout(
      `bought ${r.count} ${city} signals at ${r.unitPriceUsd} USDC each (${r.amountUsd} USDC)${retried ? ' [settled after a retry of the same authorization]' : ''}`,
    );
    io.stdout(`entitled through seq ${r.paidThroughSeq} (latest now ${r.latestSeq}); tx ${r.txHash ?? 'n/a'}`);
    io.stdout(
      `receipt saved to ${receiptsFile} (mode 0600); read with: isocast read --city ${city}${server === DEFAULT_SERVER ? '' : ` --server ${server}`}`,
    );
  }
  return EXIT.ok;
}
