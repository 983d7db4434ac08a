import type { Logger } from '../lib/logger.ts';
import { connectNats, type Nats } from './nats-client.ts';

/**
 * One NATS connection per process, shared by the publisher or the follower and the single-use
 * guard. `ensure` connects (or waits for the connect in progress); `drop` forgets a connection
 * that failed, so the next `ensure` builds it again and re-checks the stream. While it is down,
 * `current` is null and each user falls back its own way (the primary keeps working alone).
 */
export type NatsLink = ReturnType<typeof createNatsLink>;

/** What the publisher and the follower both report on /health. */
export type LinkStatus = { nats: 'connected' | 'disconnected'; lastError: string | null };

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
    state: (): LinkStatus['nats'] => (up ? 'connected' : 'disconnected'),
  };
}
