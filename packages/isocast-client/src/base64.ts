/**
 * Base64 of JSON and back, through TextEncoder/btoa rather than Node's Buffer, so the package runs
 * unchanged in Node 20+, Deno, Bun and browsers.
 */
export function base64Json(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

export function jsonOfBase64(text: string): unknown {
  const bin = atob(text.trim());
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes));
}

/**
 * The settlement answer of a paid request (`X-PAYMENT-RESPONSE`, or x402 v2's `PAYMENT-RESPONSE`):
 * the transaction hash, the network and the payer. Throws on a header that is not base64 JSON.
 */
export function decodePaymentResponse(header: string): {
  success: boolean;
  transaction: string;
  network: string;
  payer: string;
} {
  return jsonOfBase64(header) as ReturnType<typeof decodePaymentResponse>;
}
