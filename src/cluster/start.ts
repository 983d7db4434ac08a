import { hash } from 'node:crypto';
import type { Db } from '../db/open.ts';
import type { CrossNodeUses } from '../db/single-use.ts';
import type { Logger } from '../lib/logger.ts';
import { replicaLagging } from '../lib/api-errors.ts';
import type { SignalNotifier } from '../signals/notifier.ts';
import type { Settler } from '../payments/settlers/settler.ts';
import { startFollower } from './follower.ts';
import { createNatsLink, type NatsLink } from './nats-link.ts';
import { startPublisher } from './publisher.ts';
import { readNodeMiddleware } from './read-node.ts';
import { createApplier, createReplicationOutbox } from './tables.ts';

type ClusterSettings = {
  ROLE: 'primary' | 'reader';
  NATS_URL?: string | undefined;
  PRIMARY_URL?: string | undefined;
  READ_MAX_LAG_MS: number;
  FORWARD_TIMEOUT_MS: number;
};

export type ClusterParts = NonNullable<ReturnType<typeof startCluster>>;

export function startCluster(
  config: ClusterSettings,
  deps: { db: Db; notifier: SignalNotifier; logger: Logger; now: () => number },
) {
  if (!config.NATS_URL) return null;
  const logger = deps.logger.child({ component: 'cluster' });
  const stream = config.NATS_URL.replace(/\/\/[^@/]*@/, '//');
  const link = createNatsLink(config.NATS_URL, { name: `isocast-${config.ROLE}`, logger });
  const stopWith = (worker: { stop(): Promise<void> }) => async () => {
    await worker.stop();
    await link.close();
  };
  if (config.ROLE === 'primary') {
    const outbox = createReplicationOutbox(deps.db);
    outbox.startRecording();
    const publisher = startPublisher({ link, outbox, logger, now: deps.now });
    return {
      middleware: undefined,
      crossNode: crossNodeUses(link, 'local'),
      health: () => ({ role: 'primary', stream, ...publisher.status() }),
      wake: () => publisher.wake(),
      stop: stopWith(publisher),
    };
  }
  // A copy: its integrity is the primary's. A receipt arrives without the payment it references.
  deps.db.pragma('foreign_keys = OFF');
  const follower = startFollower({ link, applier: createApplier(deps.db, deps.notifier), logger, now: deps.now });
  return {
    middleware: readNodeMiddleware({
      primaryUrl: config.PRIMARY_URL!,
      forwardTimeoutMs: config.FORWARD_TIMEOUT_MS,
      maxLagMs: config.READ_MAX_LAG_MS,
      lagMs: follower.lagMs,
    }),
    crossNode: crossNodeUses(link, 'refuse'),
    health: () => {
      const lag = follower.lagMs();
      const fresh = lag !== null && lag <= config.READ_MAX_LAG_MS;
      return { role: 'reader', stream, fresh, maxLagMs: config.READ_MAX_LAG_MS, ...follower.status() };
    },
    wake: () => {},
    stop: stopWith(follower),
  };
}

/** A create-only key succeeds on one node; without NATS a primary decides alone, a reader cannot know: it refuses. */
function crossNodeUses(link: NatsLink, whenDown: 'local' | 'refuse'): CrossNodeUses {
  const down = (): boolean => {
    if (whenDown === 'refuse') throw replicaLagging(1, null);
    return true;
  };
  return {
    async claim(table, key) {
      const kv = link.current()?.singleUse;
      if (!kv) return down();
      try {
        await kv.create(`${table}.${hash('sha256', key, 'hex')}`, '');
        return true;
      } catch (err) {
        if (/wrong last sequence|key exists/i.test((err as Error).message)) return false;
        return down();
      }
    },
  };
}

/** A reader never moves money: purchases are forwarded (read-node.ts); one that arrives fails as not charged. */
export function readerSettler(base: Settler): Settler {
  return {
    ...base,
    settle: async () => ({ ok: false, reason: 'a read node does not settle payments', inDoubt: false }),
    status: async () => ({ state: 'unknown', reason: 'a read node does not settle payments' }),
  };
}
