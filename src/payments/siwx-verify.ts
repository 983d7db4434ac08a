/**
 * `@x402/extensions`' parser and signature check for `SIGN-IN-WITH-X`, imported on the first
 * sign-in, never at start: the library is about a quarter of the binary's main bundle and its
 * start-up evaluation. It is a bundle of its own in the binary (scripts/sea/asset-bundles.ts), so
 * it takes and returns plain data; only a thrown error's message is read.
 */
export { parseSIWxHeader, verifySIWxSignature } from '@x402/extensions/sign-in-with-x';
