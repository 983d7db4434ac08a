import type { Db } from './db/open.ts';
import { createEntitlementStore } from './entitlements/store.ts';
import { createReceiptStore } from './entitlements/receipts.ts';
import { createDiscoveryStore, createRuleStore } from './resolution/store.ts';
import { createSignalNotifier } from './signals/notifier.ts';
import { createSignalReader } from './signals/read-store.ts';
import { createSignalStore } from './signals/store.ts';

/**
 * Built once per process and passed down, so each statement is prepared once and the reader's
 * cache, its memo (dropped on this connection's writes) and the long-polls' notifier exist once.
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
