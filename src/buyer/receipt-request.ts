/**
 * The typed data a buyer signs about its receipt tokens (`POST /v1/receipts`,
 * `POST /v1/receipts/revoke`): the server's own definitions, so the two cannot drift. Every
 * signature names the origin of the server it is sent to (issue 23 item 5).
 */
export {
  RECEIPT_REQUEST_DOMAIN,
  RECEIPT_REQUEST_PRIMARY_TYPE,
  RECEIPT_REQUEST_TYPES,
  RECEIPT_REVOCATION_PRIMARY_TYPE,
  RECEIPT_REVOCATION_TYPES,
  originOf,
  receiptTypedData,
  receiptRequestTypedData,
} from '../payments/receipt-request.ts';
