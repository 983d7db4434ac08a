import type { Hex } from 'viem';
import { BASE_CAIP2, BASE_V1_NAME } from '../../x402/networks.ts';
import type { JsonAnswer } from '../../lib/http-client.ts';
import type { WireKind } from '../../x402/v2.ts';

/**
 * The kind a facilitator is sent, from its cached `GET /supported`: v2 when it lists Base by CAIP-2, else v1 `base`
 * (v1 facilitators refuse `eip155:8453`), else v1 by CAIP-2. A refusal naming the kind, or age, makes it stale.
 */
const PREFERRED_KINDS: readonly WireKind[] = [
  { x402Version: 2, scheme: 'exact', network: BASE_CAIP2 },
  { x402Version: 1, scheme: 'exact', network: BASE_V1_NAME },
  { x402Version: 1, scheme: 'exact', network: BASE_CAIP2 },
];

/** Sent while `/supported` has never answered: the name every v1 facilitator and v2's registerV1 accept. */
export const FALLBACK_KIND: WireKind = PREFERRED_KINDS[1]!;

/** `none`: a list without a kind we pay with (serve refuses to start); `unanswered`: nothing known yet. */
export type SupportedResult =
  | { ok: true; kind: WireKind; listed: string[] }
  | { ok: false; problem: 'none'; detail: string; listed: string[] }
  | { ok: false; problem: 'unanswered'; detail: string };

export const describeKind = (k: { x402Version: number; scheme: string; network: string }) =>
  `v${k.x402Version} ${k.scheme} ${k.network}`;

const isKind = (k: unknown): k is WireKind => {
  const o = k as Partial<Record<keyof WireKind, unknown>> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.x402Version === 'number' &&
    typeof o.scheme === 'string' &&
    typeof o.network === 'string'
  );
};

function chooseKind(answer: JsonAnswer): SupportedResult {
  const kinds = (answer.json as { kinds?: unknown } | null)?.kinds;
  const parsed = Array.isArray(kinds) && kinds.every(isKind);
  if (answer.status < 200 || answer.status > 299 || !parsed)
    return {
      ok: false,
      problem: 'unanswered',
      detail: `GET /supported answered HTTP ${answer.status}${parsed ? '' : ' without a kinds list'}`,
    };
  const listed = kinds.map(describeKind);
  const kind = PREFERRED_KINDS.find((want) =>
    kinds.some((k) => k.x402Version === want.x402Version && k.scheme === want.scheme && k.network === want.network),
  );
  if (!kind)
    return {
      ok: false,
      problem: 'none',
      detail: `lists neither v2 exact ${BASE_CAIP2} nor v1 exact ${BASE_V1_NAME} (it lists: ${listed.join(', ') || 'nothing'})`,
      listed,
    };
  return { ok: true, kind, listed };
}

/** A refusal whose reason says the facilitator did not take the kind we sent. */
export const NAMES_KIND = /network|version|scheme/i;

/** A good answer is read again (without holding any payment) after this. */
const TTL_MS = 3_600_000;
/** While it has never answered, at most one read per this interval (each may hold a payment). */
const RETRY_MS = 10_000;

/** A reading that lists none of our kinds: nothing is sent (failover asks the next one). */
type NoKind = Extract<SupportedResult, { problem: 'none' }>;

export function createKindCache(opts: { fetch: () => Promise<JsonAnswer>; now: () => number }) {
  let kind: WireKind | null = null;
  let last: SupportedResult | null = null;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let stale = true;
  /** When a refusal last made a payment wait for a read of `/supported`. */
  let forcedAt = Number.NEGATIVE_INFINITY;
  let running: Promise<SupportedResult> | null = null;

  async function read(): Promise<SupportedResult> {
    let result: SupportedResult;
    try {
      result = chooseKind(await opts.fetch());
    } catch (err) {
      result = { ok: false, problem: 'unanswered', detail: `GET /supported failed: ${(err as Error).message}` };
    }
    checkedAt = opts.now();
    stale = false;
    if (result.ok) kind = result.kind;
    last = result;
    return result;
  }

  function refresh(): Promise<SupportedResult> {
    running ??= read().finally(() => {
      running = null;
    });
    return running;
  }

  return {
    refresh,
    /** A refusal named the network, version or scheme: read `/supported` again before the next call (at most once per RETRY_MS). */
    invalidate: () => {
      stale = true;
    },
    /** The kind to send now (fetched first when stale after a refusal or never fetched), or the list without one. */
    async current(): Promise<WireKind | NoKind> {
      const age = opts.now() - checkedAt;
      // At most one read per RETRY_MS however many refusals come: a burst waits on one shared read.
      if (kind === null ? age >= RETRY_MS : stale && opts.now() - forcedAt >= RETRY_MS) {
        if (kind !== null) forcedAt = opts.now();
        await refresh();
      } else if (age >= TTL_MS) void refresh();
      if (last?.ok === false && last.problem === 'none') return last;
      return kind ?? FALLBACK_KIND;
    },
  };
}

/** A facilitator's answer for money (docs/payments.md "Facilitators"): a 4xx naming no transaction is not charged. */
type VerifyAnswer = { isValid: boolean; invalidReason?: string | null; invalidMessage?: string | null };
type SettleAnswer = {
  success: boolean;
  errorReason?: string | null;
  errorMessage?: string | null;
  transaction?: string | null;
};

/** The answer as x402 types it (`flag` a boolean, each of `texts` a string, null or absent, more allowed), or null. */
function x402Answer<T>(json: unknown, flag: string, texts: readonly string[]): T | null {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const j = json as Record<string, unknown>;
  if (typeof j[flag] !== 'boolean') return null;
  for (const k of texts) if (j[k] != null && typeof j[k] !== 'string') return null;
  return json as T;
}
const VERIFY_TEXTS = ['invalidReason', 'invalidMessage', 'payer'];
const SETTLE_TEXTS = ['errorReason', 'errorMessage', 'transaction', 'network', 'payer'];

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
  const s = x402Answer<SettleAnswer>(answer.json, 'success', SETTLE_TEXTS);
  const named = namedTransaction(answer, nonce);
  if (status >= 500) return { kind: 'unclear', reason: `facilitator /settle answered HTTP ${status}`, txHash: named };
  if (status >= 400) {
    if (named)
      return { kind: 'unclear', reason: `facilitator /settle answered HTTP ${status} naming ${named}`, txHash: named };
    return {
      kind: 'refused',
      reason:
        s && !s.success ? settleFailure(s) : `facilitator refused /settle (HTTP ${status}): ${refusalReason(answer)}`,
    };
  }
  if (!s)
    return {
      kind: 'unclear',
      reason: `facilitator /settle answered HTTP ${status} without a valid x402 body`,
      txHash: named,
    };
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
  const v = x402Answer<VerifyAnswer>(answer.json, 'isValid', VERIFY_TEXTS);
  if (v && answer.status < 500) {
    if (v.isValid && answer.status < 300) return null;
    if (!v.isValid)
      return `facilitator refused verification: ${v.invalidReason ?? v.invalidMessage ?? 'no reason given'}`;
  }
  if (answer.status >= 400 && answer.status < 500)
    return `facilitator: /verify answered HTTP ${answer.status}: ${refusalReason(answer)}`;
  return `facilitator: /verify answered HTTP ${answer.status} without a valid x402 body`;
}
