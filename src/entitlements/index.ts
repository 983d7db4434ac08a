export { entitlementOf, applyPurchase, type Entitlement } from './store.ts';
export { nextCeiling, isEntitled } from './ceiling.ts';
export { issueReceipt, walletForReceipt, RECEIPT_FORMAT } from './receipts.ts';
