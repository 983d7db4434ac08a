/**
 * Stands in for @noble/hashes' `crypto` module (esm/cryptoNode.js) inside the binary
 * (scripts/sea/lazy-builtins.ts). The original reads node:crypto's `webcrypto` while the bundle
 * is evaluated, which loads node:crypto at every start; its only user, noble's randomBytes, calls
 * `crypto.getRandomValues`, which here reaches the same WebCrypto on first call.
 */
export const crypto = {
  getRandomValues: (array) => process.getBuiltinModule('node:crypto').webcrypto.getRandomValues(array),
};
