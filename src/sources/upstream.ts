import type { z } from 'zod';
import { UpstreamError } from '../lib/errors.ts';
import { retryAfterMs, type HttpResponse } from '../lib/http-client.ts';

/** An upstream answer read against its schema; a mismatch names its first problem (`malformed books: 0.bids: ...`). */
export function parseUpstream<S extends z.ZodType>(schema: S, raw: unknown, where: { upstream: string; what: string }) {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data as z.output<S>;
  const issue = parsed.error.issues[0]!;
  throw new UpstreamError(where.upstream, `malformed ${where.what}: ${issue.path.join('.')}: ${issue.message}`);
}

export const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** A non-2xx answer as the UpstreamError the backoff reads (status, and Retry-After when sent). */
export function requireOk(upstream: string, res: HttpResponse): void {
  if (res.status < 200 || res.status > 299)
    throw new UpstreamError(upstream, `HTTP ${res.status}`, {
      httpStatus: res.status,
      retryAfterMs: retryAfterMs(res.headers),
    });
}

/**
 * Sliding-window limiter for one upstream endpoint: at most `limit` grants in any `windowMs`.
 * Polymarket documents sliding windows and queues excess requests rather than rejecting them, so
 * we queue on our side too instead of failing; callers wait in FIFO order.
 */
export type RateLimiter = { acquire(): Promise<void> };

export function createRateLimiter(opts: { limit: number; windowMs: number }): RateLimiter {
  const granted: number[] = [];
  const queue: (() => void)[] = [];
  let timer: NodeJS.Timeout | null = null;

  const drain = () => {
    timer = null;
    const t = Date.now();
    while (granted.length > 0 && granted[0]! <= t - opts.windowMs) granted.shift();
    while (queue.length > 0 && granted.length < opts.limit) {
      granted.push(t);
      queue.shift()!();
    }
    if (queue.length > 0) {
      const wait = Math.max(1, granted[0]! + opts.windowMs - t);
      timer = setTimeout(drain, wait);
      timer.unref();
    }
  };

  return {
    acquire: () =>
      new Promise<void>((resolve) => {
        queue.push(resolve);
        if (!timer) drain();
      }),
  };
}

export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
