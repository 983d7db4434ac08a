import { hash } from 'node:crypto';
import type { CrossNodeUses } from '../db/single-use.ts';
import { replicaLagging } from '../lib/api-errors.ts';
import type { NatsLink } from './nats-link.ts';

/**
 * Single-use across nodes: a signed request's key is created in the JetStream
 * key-value bucket with a create-only write, which succeeds on exactly one node; every other
 * node's create fails with "wrong last sequence". The local table (db/single-use.ts) still
 * records it as before. When NATS cannot be asked, the primary answers as the single node it
 * then is (`whenDown: 'local'`: the local table alone decides), and a reader refuses the sign-in
 * (`'refuse'`): it cannot know whether another node took the same nonce.
 */
export function createCrossNodeUses(link: NatsLink, opts: { whenDown: 'local' | 'refuse' }): CrossNodeUses {
  const down = (): boolean => {
    if (opts.whenDown === 'refuse') throw replicaLagging(1, null);
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
