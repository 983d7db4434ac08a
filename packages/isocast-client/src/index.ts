/**
 * @isocast/client: buy isocast signal bundles over x402 with any viem account. See README.md.
 *
 * - `IsocastExactScheme` / `registerIsocast`: isocast's `exact` payment as an `@x402/core` scheme
 *   client, so `@x402/fetch` (or any x402 v1/v2 client) pays isocast with its spend controls on.
 * - `payFor402`: the same payment without an x402 client: a 402 body in, an `X-Payment` header out.
 * - `checkChallenge` and friends: the checks every 402 passes before anything is signed.
 * - `recoverReceipt` / `revokeReceipts`: a lost receipt token back for one signature, or revoked.
 */
export { base64Json, decodePaymentResponse } from './base64.ts';
export { BINDING_FORMULA, type BindingNonceInput, bindingNonce, MAX_AUTH_LIFETIME_S, SALT_ECHO } from './binding.ts';
export {
  type Authorization,
  BASE_ALIASES,
  BASE_CAIP2,
  BASE_CHAIN_ID,
  BASE_USDC,
  BASE_V1_NAME,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  USDC_DECIMALS,
  USDC_NAME,
  USDC_VERSION,
} from './chain.ts';
export {
  type Accept,
  type Binding,
  builtInTiers,
  type Challenge,
  ChallengeRefused,
  checkChallenge,
  type Expectations,
  formatAtomic,
  formatUsd,
  tierProblem,
  usdToAtomic,
} from './guard.ts';
export {
  bindingOf,
  type ExactChallenge,
  type PayOptions,
  type Payment,
  PaymentDeclined,
  payFor402,
  type SignableAccount,
  signExact,
} from './pay.ts';
export { isValidPaymentId, newPaymentId, PAYMENT_IDENTIFIER } from './payment-id.ts';
export { bundlePrice, MAX_COUNT, MIN_COUNT, type Tier, TIERS, tierFor } from './pricing.ts';
export {
  originOf,
  RECEIPT_REQUEST_DOMAIN,
  RECEIPT_REQUEST_PRIMARY_TYPE,
  RECEIPT_REQUEST_TYPES,
  RECEIPT_REVOCATION_PRIMARY_TYPE,
  RECEIPT_REVOCATION_TYPES,
  type ReceiptMessage,
  type ReceiptSignedKind,
  receiptRequestTypedData,
  receiptTypedData,
} from './receipt-typed-data.ts';
export {
  type ReceiptAnswer,
  type ReceiptBodyRequest,
  type ReceiptCallOptions,
  ReceiptError,
  type ReceiptFailure,
  type ReceiptSigner,
  type RecoveredReceipt,
  readReceiptAnswer,
  readRevocationAnswer,
  recoverReceipt,
  revokeReceipts,
  type SignedReceiptBody,
  serverErrorText,
  signReceiptBody,
} from './receipts.ts';
export { findControls, hasControls, stripControls, stripControlsDeep } from './sanitize.ts';
export {
  ISOCAST_NETWORK_V2,
  ISOCAST_NETWORKS,
  IsocastExactScheme,
  type IsocastSchemeOptions,
  registerIsocast,
} from './x402-scheme.ts';
