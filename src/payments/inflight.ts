/** At most one settle or doubt resolution per (payer, nonce) in this process: never sent to a settler twice at once. */
export const paymentKey = (payer: string, nonce: string) => `${payer.toLowerCase()}:${nonce}`;

export function createInflight<T>() {
  const running = new Map<string, Promise<T>>();
  return {
    has: (key: string) => running.has(key),
    exclusive(key: string, work: () => Promise<T>): Promise<T> | null {
      if (running.has(key)) return null;
      const p = work();
      running.set(key, p);
      const done = () => {
        running.delete(key);
      };
      p.then(done, done);
      return p;
    },
    async ended(key: string): Promise<void> {
      await running.get(key)?.catch(() => undefined);
    },
    size: () => running.size,
    keys: () => [...running.keys()],
    /** Resolves once nothing runs (or never, if a settle hangs: the caller bounds it). */
    async drain(): Promise<void> {
      while (running.size > 0) await Promise.allSettled([...running.values()]);
    },
  };
}
