import type { Db } from './db/open.ts';
import { createEntitlementStore } from './entitlements/store.ts';
import { createReceiptStore } from './entitlements/receipts.ts';
import { createDiscoveryStore } from './resolution/discovery-store.ts';
import { createRuleStore } from './resolution/store.ts';
import { createSignalNotifier } from './signals/notifier.ts';
import { createSignalReader } from './signals/read-store.ts';
import { createSignalStore } from './signals/store.ts';

/**
 * One store per table, built once per process by the wiring (main.ts, and tests the same way) and
 * passed down: each prepares its statements once, and state that must be shared is shared by
 * construction. The reader's page cache and latest-seq memo exist once; the memo is dropped on
 * any write of this connection (read-store.ts), so the poller's commits show at once. The
 * notifier the signal store tells of each commit is the one the long-poll routes wait on.
 */
export type Stores = ReturnType<typeof createStores>;

export function createStores(db: Db) {
  const notifier = createSignalNotifier();
  const signals = createSignalStore(db, notifier);
  return {
    notifier,
    signals,
    reader: createSignalReader(db, signals),
    entitlements: createEntitlementStore(db, signals),
    receipts: createReceiptStore(db),
    rules: createRuleStore(db),
    discovery: createDiscoveryStore(db),
  };
}
