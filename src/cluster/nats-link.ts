import type { Logger } from '../lib/logger.ts';
import { connectNats, type Nats } from './nats-client.ts';

/**
 * One NATS connection per process. `drop` forgets a failed one, so the next `ensure` builds it
 * again and re-checks the stream; while it is down `current` is null and each user falls back
 * its own way (the primary keeps working alone).
 */
export type NatsLink = ReturnType<typeof createNatsLink>;

export function createNatsLink(url: string, deps: { name: string; logger: Logger }) {
  let nats: Nats | null = null;
  let connecting: Promise<Nats> | null = null;
  let up = false;
  let closed = false;
  const watch = async (n: Nats) => {
    for await (const s of n.nc.status()) {
      if (s.type === 'disconnect') up = false;
      if (s.type === 'reconnect') up = true;
    }
  };
  return {
    current: (): Nats | null => (up ? nats : null),
    ensure(): Promise<Nats> {
      if (nats) return Promise.resolve(nats);
      if (closed) return Promise.reject(new Error('NATS link closed'));
      connecting ??= connectNats(url, deps.name).then(
        (n) => {
          connecting = null;
          nats = n;
          up = true;
          void watch(n);
          deps.logger.info('nats connected', { server: n.nc.getServer(), streamCreated: n.streamCreated });
          return n;
        },
        (err) => {
          connecting = null;
          throw err;
        },
      );
      return connecting;
    },
    drop(reason: unknown) {
      const n = nats;
      nats = null;
      up = false;
      if (n) {
        deps.logger.warn('nats connection dropped', { reason: String((reason as Error)?.message ?? reason) });
        void n.nc.close().catch(() => {});
      }
    },
    async close() {
      closed = true;
      const n = nats;
      nats = null;
      up = false;
      await n?.nc.close().catch(() => {});
    },
    state: () => (up ? 'connected' : 'disconnected'),
  };
}

const RETRY_MS = 1_000;

/**
 * The publisher's and the follower's loop: `step` until stopped. A failure drops the connection
 * (the next `ensure` rebuilds it), is logged once until `ok` says a step went through again, and
 * waits `RETRY_MS` (by `wait`, the caller's pause, or a sleep that `stop` cuts short).
 */
export function linkLoop(
  link: NatsLink,
  loop: {
    logger: Logger;
    step(): Promise<void>;
    failed: string;
    failFields?: () => Record<string, unknown>;
    wait?: (ms: number) => Promise<void>;
  },
) {
  let stopped = false;
  let lastError: string | null = null;
  let wake: (() => void) | null = null;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const done = (async () => {
    while (!stopped) {
      try {
        await loop.step();
      } catch (err) {
        if (stopped) break;
        const message = (err as Error).message;
        if (lastError === null) loop.logger.warn(loop.failed, { reason: message, ...loop.failFields?.() });
        lastError = message;
        link.drop(err);
        await (loop.wait ?? sleep)(RETRY_MS);
      }
    }
  })();
  return {
    stopped: () => stopped,
    lastError: () => lastError,
    ok(message: string, fields: Record<string, unknown>) {
      if (lastError !== null) loop.logger.info(message, fields);
      lastError = null;
    },
    /** Ends the loop; `interrupt` ends the step in progress. */
    async stop(interrupt?: () => void) {
      stopped = true;
      wake?.();
      interrupt?.();
      await done;
    },
  };
}
