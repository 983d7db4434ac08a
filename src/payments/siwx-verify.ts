/**
 * Loaded on the first sign-in, never at start (a quarter of the main bundle's evaluation); a bundle of its own in
 * the binary (scripts/sea/asset-bundles.ts), so only plain data and a thrown error's message cross it.
 */
export { parseSIWxHeader, verifySIWxSignature } from '@x402/extensions/sign-in-with-x';
