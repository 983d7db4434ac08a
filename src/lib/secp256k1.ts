import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readAssetBytes, seaModule } from './assets.ts';
import { createLogger } from './logger.ts';
import { cacheRoots, dlopenAddon, loadEmbeddedAddon } from './native-addon.ts';

/**
 * Recovery through libsecp256k1: its N-API addon (the `secp256k1` package's prebuild, about 5x
 * faster) where one loads, else its WASM build (`tiny-secp256k1`'s module), both driven directly
 * so no package loader or JS fallback is bundled; viem's BigInt recovery was half a paid request's
 * CPU. viem's semantics (tests compare them): high s accepted, as USDC rejects it at settlement.
 */
export const SECP256K1_WASM_ASSET = 'secp256k1.wasm';
export const SECP256K1_ADDON_ASSET = 'secp256k1.node';

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
type WasmApi = {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
};
const WASM = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

type Engine = {
  name: 'native' | 'wasm';
  recover(hash: Uint8Array, sig64: Uint8Array, recoveryId: number): Uint8Array | null;
};

/** The curve order n, big-endian: r and s must be below it. */
const N = Buffer.from('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 'hex');

export function loadWasmEngine(
  bytes: Uint8Array = seaModule() ? readAssetBytes(SECP256K1_WASM_ASSET) : readFileSync(secp256k1WasmPath()),
): Engine {
  // The module imports its randomness (context blinding) and its error reporting (caught in recover) from JS.
  const imports = {
    './rand.js': { generateInt32: () => randomBytes(4).readInt32BE(0) },
    './validate_error.js': {
      throwError: (code: number) => {
        throw new TypeError(`secp256k1 error ${code}`);
      },
    },
  };
  const module = new WASM.Module(bytes);
  const wasm = new WASM.Instance(module, imports).exports as Exports;
  // Views are taken per call: growing the memory would detach a cached one.
  const view = (g: WasmGlobal, len: number) => new Uint8Array(wasm.memory.buffer, g.value, len);
  return {
    name: 'wasm',
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

/** The package's prebuilds for this platform, in the order to try: each libc's fails to load on the other. */
export function secp256k1AddonCandidates(): string[] {
  const pkg = dirname(createRequire(import.meta.url).resolve('secp256k1/package.json'));
  const dir = join(pkg, 'prebuilds', `${process.platform}-${process.arch}`);
  const names = process.platform === 'linux' ? ['secp256k1.glibc.node', 'secp256k1.musl.node'] : ['secp256k1.node'];
  return names.map((n) => join(dir, n)).filter((f) => existsSync(f));
}

/** The first of `files` that loads here, and its exports (the build embeds that file). */
export function loadPrebuiltAddon(files: string[] = secp256k1AddonCandidates()): { exports: object; file: string } {
  const problems: string[] = [];
  for (const file of files) {
    try {
      return { exports: dlopenAddon(file), file };
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  throw new Error(`no secp256k1 prebuild loads on ${process.platform}-${process.arch} (${problems.join('; ')})`);
}

// The addon's C++ signature (node_modules/secp256k1/src/secp256k1.cc), not one of ours to reshape.
type Addon = {
  ecdsaRecover(...args: [out: Uint8Array, sig64: Uint8Array, recoveryId: number, hash: Uint8Array]): number;
};

/** The N-API addon; inside the single binary from its asset, extracted like better-sqlite3's. */
export function loadNativeEngine(files?: string[]): Engine {
  const exports = seaModule()
    ? loadEmbeddedAddon(readAssetBytes(SECP256K1_ADDON_ASSET), cacheRoots(process.env), { name: SECP256K1_ADDON_ASSET })
        .exports
    : loadPrebuiltAddon(files).exports;
  const addon = new (exports as { Secp256k1: new () => Addon }).Secp256k1();
  // 65 bytes: the addon serialises uncompressed (0x04 || x || y) for that length.
  const out = Buffer.alloc(65);
  return {
    name: 'native',
    // 0 is success; 1 (unparsable r/s) and 2 (no point) recover nothing, as in the WASM.
    recover: (hash, sig64, recoveryId) =>
      addon.ecdsaRecover(out, sig64, recoveryId, hash) === 0 ? new Uint8Array(out.subarray(1)) : null,
  };
}

const DEFAULT_LOADERS: (() => Engine)[] = [() => loadNativeEngine(), () => loadWasmEngine()];
let loaders = DEFAULT_LOADERS;
/** The first engine that loaded (null: none did) and why the ones before it did not. */
let loaded: { engine: Engine | null; error: string | null } | undefined;

/** On first use, never at start-up: dlopen and WASM compile cost ms. */
function load(): { engine: Engine | null; error: string | null } {
  const problems: string[] = [];
  let engine: Engine | null = null;
  for (const next of loaders) {
    try {
      engine = next();
      break;
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  loaded = { engine, error: problems.length ? problems.join('; ') : null };
  // Expected where no prebuild exists (linux-arm64); eip3009-recover.ts warns if viem must serve.
  if (engine && loaded.error)
    createLogger({ base: { service: 'isocast' } }).info(`secp256k1: recovering with the ${engine.name} engine`, {
      reason: loaded.error,
    });
  return loaded;
}

/** Which engine recovers ('native' or 'wasm'), loading it now; null when neither loads. */
export const secp256k1Engine = (): Engine['name'] | null => (loaded ?? load()).engine?.name ?? null;

/** Why an engine did not load (the native addon's reason even when the WASM took over). */
export const secp256k1LoadError = (): string | null => (loaded ?? load()).error;

/** Test and bench hook: the engines to try, in order (default: native, then WASM), loaded at next use. */
export function resetSecp256k1ForTests(order?: (() => Engine)[]): void {
  loaders = order ?? DEFAULT_LOADERS;
  loaded = undefined;
}

const below = (x: Uint8Array) => Buffer.compare(x, N) < 0;
const isZero = (x: Uint8Array) => x.every((b) => b === 0);

/**
 * The 64-byte public key that signed `hash`; null when nothing recovers, `undefined` without an
 * engine. viem `recoverAddress`'s pre-checks first: v in {0, 1, 27, 28}, r and s in [1, n-1].
 */
export function recoverPublicKey(hash: Uint8Array, signature: Uint8Array): Uint8Array | null | undefined {
  const e = (loaded ?? load()).engine;
  if (!e) return undefined;
  if (hash.length !== 32 || signature.length !== 65) return null;
  const v = signature[64]!;
  const recoveryId = v === 0 || v === 1 ? v : v === 27 ? 0 : v === 28 ? 1 : -1;
  const r = signature.subarray(0, 32);
  const s = signature.subarray(32, 64);
  if (recoveryId < 0 || isZero(r) || isZero(s) || !below(r) || !below(s)) return null;
  return e.recover(hash, signature.subarray(0, 64), recoveryId);
}
