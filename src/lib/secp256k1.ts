import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { seaModule } from './assets.ts';

/**
 * Recovery through libsecp256k1 WASM (`tiny-secp256k1`'s module, driven directly so its loader is
 * never bundled): viem's BigInt recovery was half a paid request's CPU. viem's semantics (tests
 * compare them): high s accepted, as USDC rejects it at settlement anyway.
 */
export const SECP256K1_WASM_ASSET = 'secp256k1.wasm';

/** Where the .wasm lives in the installed package (also the build script's asset source). */
export function secp256k1WasmPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('tiny-secp256k1')), '..', 'secp256k1.wasm');
}

// The project's TypeScript libs carry no WebAssembly types; these are the parts used here.
type WasmGlobal = { value: number };
type Exports = {
  memory: { buffer: ArrayBuffer };
  HASH_INPUT: WasmGlobal;
  SIGNATURE_INPUT: WasmGlobal;
  PUBLIC_KEY_INPUT: WasmGlobal;
  recover(outputLength: number, recoveryId: number): number;
};
const WASM = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: unknown };
    };
  }
).WebAssembly;

type Engine = {
  recover(hash: Uint8Array, sig64: Uint8Array, recoveryId: number): Uint8Array | null;
};

/** The curve order n, big-endian: r and s must be below it. */
const N = Buffer.from('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 'hex');

const ERRORS = [
  'Expected Private',
  'Expected Point',
  'Expected Tweak',
  'Expected Hash',
  'Expected Signature',
  'Expected Extra Data',
  'Expected Parity',
  'Bad Recovery Id',
];

function instantiate(bytes: Uint8Array): Engine {
  // The module imports its randomness (context blinding) and its error reporting from JS.
  const imports = {
    './rand.js': { generateInt32: () => randomBytes(4).readInt32BE(0) },
    './validate_error.js': {
      throwError: (code: number) => {
        throw new TypeError(ERRORS[code] ?? `secp256k1 error ${code}`);
      },
    },
  };
  const module = new WASM.Module(bytes);
  const wasm = new WASM.Instance(module, imports).exports as Exports;
  // Views are taken per call: growing the memory would detach a cached one.
  const view = (g: WasmGlobal, len: number) => new Uint8Array(wasm.memory.buffer, g.value, len);
  return {
    recover(hash, sig64, recoveryId) {
      const h = view(wasm.HASH_INPUT, 32);
      const s = view(wasm.SIGNATURE_INPUT, 64);
      const p = view(wasm.PUBLIC_KEY_INPUT, 65);
      try {
        h.set(hash);
        s.set(sig64);
        return wasm.recover(65, recoveryId) === 1 ? p.slice(1, 65) : null;
      } catch {
        return null;
      } finally {
        h.fill(0);
        s.fill(0);
        p.fill(0);
      }
    },
  };
}

function wasmBytes(): Uint8Array {
  const sea = seaModule();
  if (sea) return new Uint8Array(sea.getRawAsset(SECP256K1_WASM_ASSET));
  return readFileSync(secp256k1WasmPath());
}

let engine: Engine | null | undefined;
let loadError: string | null = null;

/** Loaded on first use (compiling 1.2 MB costs a few ms, so start-up never pays); null when it cannot load. */
function wasmEngine(): Engine | null {
  if (engine === undefined) {
    try {
      engine = instantiate(wasmBytes());
    } catch (err) {
      engine = null;
      loadError = err instanceof Error ? err.message : String(err);
    }
  }
  return engine;
}

/** Loads the engine now; returns whether the WASM recovery is available. */
export function secp256k1Ready(): boolean {
  return wasmEngine() !== null;
}

export function secp256k1LoadError(): string | null {
  wasmEngine();
  return loadError;
}

/** Test hook: forget the loaded engine, or install bytes that fail, to exercise the fallback. */
export function resetSecp256k1ForTests(bytes?: Uint8Array): void {
  loadError = null;
  if (!bytes) {
    engine = undefined;
    return;
  }
  try {
    engine = instantiate(bytes);
  } catch (err) {
    engine = null;
    loadError = err instanceof Error ? err.message : String(err);
  }
}

const below = (x: Uint8Array) => Buffer.compare(x, N) < 0;
const isZero = (x: Uint8Array) => x.every((b) => b === 0);

/** What the curve itself needs from a 65-byte signature before any recovery runs. */
type RecoveryInput = { hash: Uint8Array; sig64: Uint8Array; recoveryId: number };

/** viem `recoverAddress`'s pre-checks (v in {0, 1, 27, 28}, r and s in [1, n-1]); null recovers nothing. */
function recoveryInput(hash: Uint8Array, signature: Uint8Array): RecoveryInput | null {
  if (hash.length !== 32 || signature.length !== 65) return null;
  const v = signature[64]!;
  const recoveryId = v === 0 || v === 1 ? v : v === 27 ? 0 : v === 28 ? 1 : -1;
  if (recoveryId < 0) return null;
  const r = signature.subarray(0, 32);
  const s = signature.subarray(32, 64);
  if (isZero(r) || isZero(s) || !below(r) || !below(s)) return null;
  return { hash, sig64: signature.subarray(0, 64), recoveryId };
}

/** Recovery of a checked input on this thread; `undefined` when the WASM engine is unavailable. */
function recoverCheckedWasm(input: RecoveryInput): Uint8Array | null | undefined {
  const e = wasmEngine();
  if (!e) return undefined;
  return e.recover(input.hash, input.sig64, input.recoveryId);
}

/** The 64-byte public key that signed `hash`; null when nothing recovers, `undefined` without the WASM. */
export function recoverPublicKeyWasm(hash: Uint8Array, signature: Uint8Array): Uint8Array | null | undefined {
  if (!wasmEngine()) return undefined;
  const input = recoveryInput(hash, signature);
  return input && recoverCheckedWasm(input);
}
