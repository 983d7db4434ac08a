import type { Db } from './db/open.ts';
import { createEntitlementStore, type EntitlementStore } from './entitlements/store.ts';
import { createReceiptStore, type ReceiptStore } from './entitlements/receipts.ts';
import { createDiscoveryStore, type DiscoveryStore } from './resolution/discovery-store.ts';
import { createRuleStore, type RuleStore } from './resolution/store.ts';
import { createSignalNotifier, type SignalNotifier } from './signals/notifier.ts';
import { createSignalReader, type SignalReader } from './signals/read-store.ts';
import { createSignalStore, type SignalStore } from './signals/store.ts';

/**
 * One store per table, built once per process by the wiring (main.ts, and tests the same way) and
 * passed down: each prepares its statements once, and state that must be shared is shared by
 * construction. The reader's page cache and latest-seq memo exist once; the memo is dropped on
 * any write of this connection (read-store.ts), so the poller's commits show at once. The
 * notifier the signal store tells of each commit is the one the long-poll routes wait on.
 */
export type Stores = {
  notifier: SignalNotifier;
  signals: SignalStore;
  reader: SignalReader;
  entitlements: EntitlementStore;
  receipts: ReceiptStore;
  rules: RuleStore;
  discovery: DiscoveryStore;
};

export function createStores(db: Db): Stores {
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
