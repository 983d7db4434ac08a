import { hash } from 'node:crypto';
import type { CrossNodeUses } from '../db/single-use.ts';
import { replicaLagging } from '../lib/api-errors.ts';
import type { NatsLink } from './nats-link.ts';

/**
 * A create-only write to the key-value bucket succeeds on exactly one node. When NATS cannot be
 * asked, the primary answers as the single node it then is (`'local'`: its own table decides) and
 * a reader refuses (`'refuse'`): it cannot know whether another node took the same nonce.
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
