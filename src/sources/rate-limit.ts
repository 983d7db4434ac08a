/**
 * Sliding-window limiter for one upstream endpoint: at most `limit` grants in any `windowMs`.
 * Polymarket documents sliding windows and queues excess requests rather than rejecting them, so
 * we queue on our side too instead of failing; callers wait in FIFO order.
 */
export type RateLimiter = { acquire(): Promise<void>; readonly waiting: number };

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
    get waiting() {
      return queue.length;
    },
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
