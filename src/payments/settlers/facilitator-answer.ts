import { z } from 'zod';
import type { Hex } from 'viem';
import type { JsonAnswer } from '../../lib/http-client.ts';

/**
 * What a facilitator's answer means for money (docs/payments.md, "Facilitators"): a 4xx naming no
 * transaction is "not charged" at once; anything else unclear is for the token contract to decide.
 */
const VerifyResponse = z
  .object({
    isValid: z.boolean(),
    invalidReason: z.string().nullish(),
    invalidMessage: z.string().nullish(),
    payer: z.string().nullish(),
  })
  .loose();

const SettleResponse = z
  .object({
    success: z.boolean(),
    errorReason: z.string().nullish(),
    errorMessage: z.string().nullish(),
    transaction: z.string().nullish(),
    network: z.string().nullish(),
    payer: z.string().nullish(),
  })
  .loose();

type SettleAnswer = z.infer<typeof SettleResponse>;

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;
const HASH_IN_TEXT = /0x[0-9a-fA-F]{64}(?![0-9a-fA-F])/g;
const MAX_REASON_CHARS = 200;

/** The transaction an answer names: its `transaction` field, or any other 32-byte hash in its body. */
function namedTransaction(answer: JsonAnswer, nonce: Hex): Hex | null {
  const field = (answer.json as { transaction?: unknown } | undefined)?.transaction;
  if (typeof field === 'string' && TX_HASH.test(field)) return field.toLowerCase() as Hex;
  // A body that echoes our request carries the nonce; any other hash may be a transaction sent.
  for (const m of answer.text.matchAll(HASH_IN_TEXT))
    if (m[0].toLowerCase() !== nonce.toLowerCase()) return m[0].toLowerCase() as Hex;
  return null;
}

/** The reason a refusal gives: an x402 reason field, an error message, or the start of the body. */
function refusalReason(answer: JsonAnswer): string {
  const j = answer.json as Record<string, unknown> | undefined;
  const fields = ['invalidReason', 'errorReason', 'error', 'message', 'invalidMessage', 'errorMessage', 'detail'];
  for (const f of fields) {
    const v = j && typeof j === 'object' ? j[f] : undefined;
    if (typeof v === 'string' && v.trim() !== '') return oneLine(v);
    if (v && typeof v === 'object' && typeof (v as { message?: unknown }).message === 'string')
      return oneLine((v as { message: string }).message);
  }
  return answer.text.trim() === '' ? 'no reason given' : oneLine(answer.text);
}

function oneLine(s: string): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_REASON_CHARS ? `${flat.slice(0, MAX_REASON_CHARS)}…` : flat;
}

type SettleClass =
  | { kind: 'settled'; txHash: Hex }
  /** Definitely nothing submitted by this call, by the facilitator's own word. */
  | { kind: 'refused'; reason: string }
  /** Unknown: the chain decides. `txHash`: a transaction the answer named. */
  | { kind: 'unclear'; reason: string; txHash: Hex | null };

export function classifySettle(answer: JsonAnswer, nonce: Hex): SettleClass {
  const { status } = answer;
  const parsed = SettleResponse.safeParse(answer.json);
  const named = namedTransaction(answer, nonce);
  if (status >= 500) return { kind: 'unclear', reason: `facilitator /settle answered HTTP ${status}`, txHash: named };
  if (status >= 400) {
    if (named)
      return { kind: 'unclear', reason: `facilitator /settle answered HTTP ${status} naming ${named}`, txHash: named };
    return {
      kind: 'refused',
      reason:
        parsed.success && !parsed.data.success
          ? settleFailure(parsed.data)
          : `facilitator refused /settle (HTTP ${status}): ${refusalReason(answer)}`,
    };
  }
  if (!parsed.success)
    return {
      kind: 'unclear',
      reason: `facilitator /settle answered HTTP ${status} without a valid x402 body`,
      txHash: named,
    };
  const s = parsed.data;
  const tx = s.transaction && TX_HASH.test(s.transaction) ? (s.transaction.toLowerCase() as Hex) : null;
  if (s.success && tx) return { kind: 'settled', txHash: tx };
  if (s.success)
    return { kind: 'unclear', reason: 'facilitator reported success without a transaction hash', txHash: null };
  // success: false after submitting: the transaction is public and can still land before validBefore.
  if (tx) return { kind: 'unclear', reason: settleFailure(s), txHash: tx };
  return { kind: 'refused', reason: settleFailure(s) };
}

const settleFailure = (s: SettleAnswer) =>
  `facilitator settlement failed: ${s.errorReason ?? s.errorMessage ?? 'no reason given'}`;

/** `/verify` moves no money: every answer but a clear "valid" (null) is a definite refusal, with this reason. */
export function verifyRefusal(answer: JsonAnswer): string | null {
  const parsed = VerifyResponse.safeParse(answer.json);
  if (parsed.success && answer.status < 500) {
    if (parsed.data.isValid && answer.status < 300) return null;
    if (!parsed.data.isValid)
      return `facilitator refused verification: ${parsed.data.invalidReason ?? parsed.data.invalidMessage ?? 'no reason given'}`;
  }
  if (answer.status >= 400 && answer.status < 500)
    return `facilitator: /verify answered HTTP ${answer.status}: ${refusalReason(answer)}`;
  return `facilitator: /verify answered HTTP ${answer.status} without a valid x402 body`;
}
