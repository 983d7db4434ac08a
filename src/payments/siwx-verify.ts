import {
  parseSIWxHeader,
  verifySIWxSignature,
  type EVMMessageVerifier,
  type SIWxPayload,
  type SIWxVerifyResult,
} from '@x402/extensions/sign-in-with-x';

/**
 * `@x402/extensions`' parser and signature check for `SIGN-IN-WITH-X`, alone in a module that
 * siwx-signin.ts imports on the first sign-in, never at start. The library brings SIWE's ABNF
 * parser (apg-js), tweetnacl and two copies of zod 3: about a quarter of the binary's main bundle
 * and its start-up evaluation (docs/performance.md, start-up), for a header most servers see
 * rarely. The binary carries it as a bundle of its own (scripts/sea/asset-bundles.ts), so it
 * takes everything through arguments and returns plain data; its errors reach the caller as
 * thrown `Error`s whose message is all that is read.
 */
export function parseSiwx(header: string): SIWxPayload {
  return parseSIWxHeader(header);
}

export function verifySiwx(p: SIWxPayload, evmVerifier?: EVMMessageVerifier): Promise<SIWxVerifyResult> {
  return evmVerifier ? verifySIWxSignature(p, { evmVerifier }) : verifySIWxSignature(p);
}
