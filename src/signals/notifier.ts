// Waits of one length end in the order they began: one ordered set and one timer per length, not a
// timer per read (about 150 bytes and a clearTimeout per wake, scripts/bench/longpoll.ts).
type WakeReason = 'signal' | 'timeout' | 'aborted' | 'stopped';

export type SignalNotifier = ReturnType<typeof createSignalNotifier>;

type Waiter = { since: number; deadline: number; done(reason: WakeReason): void };

function setIn<K>(map: Map<K, Set<Waiter>>, key: K): Set<Waiter> {
  const set = map.get(key) ?? new Set<Waiter>();
  map.set(key, set);
  return set;
}

export function createSignalNotifier(now: () => number = () => performance.now()) {
  const byCity = new Map<string, Set<Waiter>>();
  const byLength = new Map<number, Set<Waiter>>();
  let timer: NodeJS.Timeout | null = null;
  let armedFor = Number.POSITIVE_INFINITY;
  let count = 0;
  let wakes = 0;
  let stopped = false;

  const arm = () => {
    let first = Number.POSITIVE_INFINITY;
    for (const set of byLength.values()) {
      const head = set.values().next().value;
      if (head && head.deadline < first) first = head.deadline;
    }
    if (first === armedFor) return;
    if (timer) clearTimeout(timer);
    timer = null;
    armedFor = first;
    if (first !== Number.POSITIVE_INFINITY) timer = setTimeout(sweep, Math.max(0, Math.ceil(first - now())));
  };
  function sweep() {
    timer = null;
    armedFor = Number.POSITIVE_INFINITY;
    const t = now();
    for (const set of [...byLength.values()])
      for (const w of set) {
        if (w.deadline > t) break;
        w.done('timeout');
      }
    arm();
  }

  return {
    committed(city: string, seq: number): void {
      const set = byCity.get(city);
      if (!set) return;
      wakes++;
      for (const w of set) if (w.since < seq) w.done('signal');
    },
    /** Resolves when a signal with seq > since commits for the city, after `ms`, on `abort`, or at `releaseAll`. */
    wait(
      city: string,
      since: number,
      { ms, abort }: { ms: number; abort?: AbortSignal | undefined },
    ): Promise<WakeReason> {
      if (stopped) return Promise.resolve('stopped');
      if (abort?.aborted) return Promise.resolve('aborted');
      return new Promise<WakeReason>((resolve) => {
        const waiters = setIn(byCity, city);
        const inOrder = setIn(byLength, ms);
        const onAbort = () => waiter.done('aborted');
        const waiter: Waiter = {
          since,
          deadline: now() + ms,
          done(reason) {
            if (!waiters.delete(waiter)) return;
            inOrder.delete(waiter);
            count--;
            if (waiters.size === 0) byCity.delete(city);
            if (inOrder.size === 0) byLength.delete(ms);
            // Nothing held: no timer left behind to keep the process up (a later wait re-arms).
            if (count === 0 && timer) {
              clearTimeout(timer);
              timer = null;
              armedFor = Number.POSITIVE_INFINITY;
            }
            abort?.removeEventListener('abort', onAbort);
            resolve(reason);
          },
        };
        waiters.add(waiter);
        inOrder.add(waiter);
        count++;
        abort?.addEventListener('abort', onAbort, { once: true });
        if (waiter.deadline < armedFor) arm();
      });
    },
    waiting: () => count,
    /** Reads woken by one commit see one value: one lookup per wallet, one body per page (paywall/held-read.ts). */
    wakes: () => wakes,
    /** Shutdown: answers every held read now, and every later wait at once. */
    releaseAll(): void {
      stopped = true;
      for (const set of [...byCity.values()]) for (const w of [...set]) w.done('stopped');
      arm();
    },
  };
}
