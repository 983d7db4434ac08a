type TakeResult = { ok: true } | { ok: false; retryAfterMs: number };

type Bucket = { tokens: number; atMs: number };
// One object each, not one per request: the address limit runs on every limited request.
const TAKE = { consume: true } as const;
const PEEK = { consume: false } as const;

/**
 * Token buckets, bounded: full ones are swept, and past `maxKeys` the least recently seen is evicted.
 * `perMinute` 0 turns the limit off; `burst` is what a key may spend at once after an idle period.
 */
export function createRateLimiter(limit: { perMinute: number; burst: number }, opts: { maxKeys?: number } = {}) {
  const maxKeys = opts.maxKeys ?? 100_000;
  const perMs = limit.perMinute / 60_000;
  const burst = Math.max(1, limit.burst);
  const buckets = new Map<string, Bucket>();
  const fullAfterMs = perMs > 0 ? burst / perMs : Infinity;
  let lastSweep = 0;

  const level = (b: Bucket | undefined, nowMs: number) =>
    b === undefined ? burst : Math.min(burst, b.tokens + Math.max(0, nowMs - b.atMs) * perMs);

  const sweep = (nowMs: number) => {
    // At most once per refill period: a full bucket is the same as no bucket.
    if (nowMs - lastSweep < Math.min(fullAfterMs, 60_000)) return;
    lastSweep = nowMs;
    for (const [k, b] of buckets) if (nowMs - b.atMs >= fullAfterMs) buckets.delete(k);
  };

  const check = (key: string, nowMs: number, { consume }: { consume: boolean }): TakeResult => {
    if (perMs <= 0) return { ok: true };
    const b = buckets.get(key);
    const tokens = level(b, nowMs);
    if (tokens < 1) return { ok: false, retryAfterMs: Math.ceil((1 - tokens) / perMs) };
    if (consume) {
      if (b) buckets.delete(key);
      buckets.set(key, { tokens: tokens - 1, atMs: nowMs });
      sweep(nowMs);
      while (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
    }
    return { ok: true };
  };

  return {
    take: (key: string, nowMs: number) => check(key, nowMs, TAKE),
    peek: (key: string, nowMs: number) => check(key, nowMs, PEEK),
    size: () => buckets.size,
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
