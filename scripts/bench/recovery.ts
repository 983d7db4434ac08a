/**
 * Signature recovery alone, in this process: microseconds per EIP-3009 authorization recovered
 * (digest included) with the production path (src/payments/eip3009-recover.ts) on each
 * libsecp256k1 engine (N-API addon, WASM) and with viem's `recoverTypedDataAddress`, over the same
 * 200 signatures, alternating bursts. Also each engine's load time (dlopen; read + compile).
 *
 * node scripts/bench/recovery.ts '{"rounds":9,"burstMs":300}'
 */
import { recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { authorizationTypedData } from '../../src/x402/eip3009.ts';
import type { Authorization } from '../../src/x402/networks.ts';
import { recoverAuthorizationSigner } from '../../src/payments/eip3009-recover.ts';
import { loadNativeEngine, loadWasmEngine, resetSecp256k1ForTests } from '../../src/lib/secp256k1.ts';
import { median } from './util.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as { rounds?: number; burstMs?: number };
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as Address;
const t0 = performance.now();
const nativeEngine = loadNativeEngine();
const t1 = performance.now();
const wasmEngine = loadWasmEngine();
const t2 = performance.now();

const samples: { a: Authorization; sig: Hex }[] = [];
for (let i = 0; i < 200; i++) {
  const account = privateKeyToAccount(generatePrivateKey());
  const a: Authorization = {
    from: account.address,
    to: USDC,
    value: 20_000n,
    validAfter: 0n,
    validBefore: 2_000_000_000n,
    nonce: generatePrivateKey(),
  };
  samples.push({ a, sig: await account.signTypedData(authorizationTypedData(USDC, a)) });
}
const production = async (i: number) => {
  const s = samples[i % 200]!;
  if ((await recoverAuthorizationSigner(USDC, s.a, s.sig)) === null) throw new Error('no signer');
};
/** The production path pinned to one engine for the burst (loaded once above). */
const pinned = (engine: typeof nativeEngine) => {
  resetSecp256k1ForTests([() => engine]);
  return production;
};
const viem = async (i: number) => {
  const s = samples[i % 200]!;
  await recoverTypedDataAddress({ ...authorizationTypedData(USDC, s.a), signature: s.sig });
};
async function burst(f: (i: number) => Promise<void>, ms: number): Promise<number> {
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) await f(n++);
  return ((performance.now() - start) * 1000) / n;
}
for (let i = 0; i < 400; i++) {
  await pinned(nativeEngine)(i);
  await pinned(wasmEngine)(i);
  await viem(i);
}
const n: number[] = [];
const w: number[] = [];
const v: number[] = [];
for (let r = 0; r < (input.rounds ?? 9); r++) {
  n.push(await burst(pinned(nativeEngine), input.burstMs ?? 300));
  w.push(await burst(pinned(wasmEngine), input.burstMs ?? 300));
  v.push(await burst(viem, input.burstMs ?? 300));
}
resetSecp256k1ForTests();
const round = (x: number) => Math.round(x * 10) / 10;
process.stdout.write(
  JSON.stringify({
    nativeUs: round(median(n)),
    wasmUs: round(median(w)),
    viemUs: round(median(v)),
    nativeVsWasm: round(median(w) / median(n)),
    nativeVsViem: round(median(v) / median(n)),
    nativePerSec: Math.round(1e6 / median(n)),
    wasmPerSec: Math.round(1e6 / median(w)),
    viemPerSec: Math.round(1e6 / median(v)),
    nativeLoadMs: round(t1 - t0),
    wasmLoadMs: round(t2 - t1),
  }) + '\n',
);
