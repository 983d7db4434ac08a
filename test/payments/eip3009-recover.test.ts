import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytesToHex, hashTypedData, hexToBytes, recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { authorizationTypedData } from '../../src/x402/eip3009.ts';
import type { Authorization } from '../../src/x402/networks.ts';
import { authorizationDigest, recoverAuthorizationSigner } from '../../src/payments/eip3009-recover.ts';
import {
  loadNativeEngine,
  loadWasmEngine,
  recoverPublicKey,
  resetSecp256k1ForTests,
  secp256k1AddonCandidates,
  secp256k1Engine,
  secp256k1LoadError,
} from '../../src/lib/secp256k1.ts';
import { tempDir } from '../helpers/app.ts';

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as Address;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

function randomAuth(from: Address): Authorization {
  const big = () => BigInt(bytesToHex(randomBytes(1 + (randomBytes(1)[0]! % 32))));
  return {
    from,
    to: privateKeyToAccount(generatePrivateKey()).address,
    value: big(),
    validAfter: big(),
    validBefore: big(),
    nonce: bytesToHex(randomBytes(32)),
  };
}

/** viem's answer, with a throw as null (what verify.ts makes of both). */
async function viemSigner(usdc: Address, a: Authorization, signature: Hex): Promise<string | null> {
  try {
    return (await recoverTypedDataAddress({ ...authorizationTypedData(usdc, a), signature })).toLowerCase();
  } catch {
    return null;
  }
}

const word = (x: bigint) => x.toString(16).padStart(64, '0');
/** Variants of a valid signature that must all come out as viem says: high s, bad r/s/v. */
function variants(sig: Hex): Hex[] {
  const r = BigInt(sig.slice(0, 66));
  const s = BigInt(`0x${sig.slice(66, 130)}`);
  const v = Number.parseInt(sig.slice(130), 16);
  const make = (rr: bigint, ss: bigint, vv: number) =>
    `0x${word(rr)}${word(ss)}${vv.toString(16).padStart(2, '0')}` as Hex;
  return [
    make(r, s, v),
    make(r, s, v - 27),
    make(r, s, v === 27 ? 28 : 27),
    make(r, N - s, v === 27 ? 28 : 27),
    make(r, N - s, v), // high s, both parities
    make(0n, s, v),
    make(r, 0n, v),
    make(N, s, v),
    make(r, N, v),
    make(r + N, s, v),
    make(r, s, 2),
    make(r, s, 29),
    make(r, s, 26),
    make(r, s, 0xff),
    make((r + 1n) % N, s, v),
    make(r, (s + 1n) % N, v),
    bytesToHex(randomBytes(65)),
    `0x${'ff'.repeat(65)}`,
    `0x${'00'.repeat(65)}`,
  ];
}

test('the hand-built EIP-712 digest equals viem hashTypedData', () => {
  for (let i = 0; i < 200; i++) {
    const a = randomAuth(privateKeyToAccount(generatePrivateKey()).address);
    assert.equal(bytesToHex(authorizationDigest(USDC, a)!), hashTypedData(authorizationTypedData(USDC, a)));
    const other = privateKeyToAccount(generatePrivateKey()).address;
    assert.equal(bytesToHex(authorizationDigest(other, a)!), hashTypedData(authorizationTypedData(other, a)));
  }
});

// linux-arm64 and others without a prebuild recover with the WASM: the native cases are skipped there.
const noPrebuild =
  secp256k1AddonCandidates().length === 0 && `no secp256k1 prebuild for ${process.platform}-${process.arch}`;

test('the native addon loads from the installed prebuild on this platform', { skip: noPrebuild }, () => {
  resetSecp256k1ForTests();
  assert.equal(secp256k1Engine(), 'native', secp256k1LoadError() ?? '');
});

/** A native addon that cannot load (not an ELF file): the WASM must take over. */
function brokenNative(t: { after(fn: () => void): void }): () => ReturnType<typeof loadNativeEngine> {
  const file = join(tempDir(t), 'secp256k1.node');
  writeFileSync(file, 'not a shared object');
  return () => loadNativeEngine([file]);
}

for (const engine of ['native', 'wasm'] as const) {
  test(`${engine}: recovery matches viem on random signatures and on high-s, zero, overflowing and bad-v variants`, {
    skip: engine === 'native' && noPrebuild,
  }, async (t) => {
    t.after(() => resetSecp256k1ForTests());
    if (engine === 'wasm') resetSecp256k1ForTests([brokenNative(t), () => loadWasmEngine()]);
    assert.equal(secp256k1Engine(), engine, secp256k1LoadError() ?? '');
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 60; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const a = randomAuth(account.address);
      const sig = await account.signTypedData(authorizationTypedData(USDC, a));
      assert.equal(await recoverAuthorizationSigner(USDC, a, sig), account.address.toLowerCase());
      for (const variant of variants(sig)) {
        const expected = await viemSigner(USDC, a, variant);
        assert.equal(await recoverAuthorizationSigner(USDC, a, variant), expected, `variant ${variant}`);
        if (expected) accepted++;
        else refused++;
      }
    }
    // Both outcomes were exercised: high s recovers (to some address) in viem too; zeros do not.
    assert.ok(accepted > 60 && refused > 60, `${accepted} accepted, ${refused} refused`);
  });
}

test('both engines return the same public keys, byte for byte', { skip: noPrebuild }, async () => {
  const native = loadNativeEngine();
  const wasm = loadWasmEngine();
  for (let i = 0; i < 40; i++) {
    const account = privateKeyToAccount(generatePrivateKey());
    const sig = hexToBytes(await account.signTypedData(authorizationTypedData(USDC, randomAuth(account.address))));
    const hash = randomBytes(32);
    for (const recoveryId of [0, 1]) {
      const args = [hash, sig.subarray(0, 64), recoveryId] as const;
      assert.deepEqual(native.recover(...args), wasm.recover(...args));
    }
  }
});

test('a native addon that fails to load falls back to the WASM, and says why', async (t) => {
  t.after(() => resetSecp256k1ForTests());
  resetSecp256k1ForTests([brokenNative(t), () => loadWasmEngine()]);
  assert.equal(secp256k1Engine(), 'wasm');
  assert.match(secp256k1LoadError() ?? '', /secp256k1/);
  const account = privateKeyToAccount(generatePrivateKey());
  const a = randomAuth(account.address);
  const sig = await account.signTypedData(authorizationTypedData(USDC, a));
  assert.equal(await recoverAuthorizationSigner(USDC, a, sig), account.address.toLowerCase());
});

test('inputs viem refuses come out as null: bad checksum, out-of-range values, short nonce or signature', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const a = randomAuth(account.address);
  const sig = await account.signTypedData(authorizationTypedData(USDC, a));
  const flipCase = (addr: Address) =>
    (addr.slice(0, 2) +
      [...addr.slice(2)]
        .map((c, i) => (i === 5 && /[a-f]/i.test(c) ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c))
        .join('')) as Address;
  const badSum = flipCase(account.address);
  const cases: [Authorization, Hex][] = [
    [{ ...a, from: badSum }, sig],
    [{ ...a, value: -1n }, sig],
    [{ ...a, validBefore: 1n << 256n }, sig],
    [{ ...a, nonce: '0x1234' }, sig],
    [a, sig.slice(0, 130) as Hex],
  ];
  for (const [auth, s] of cases) {
    if (auth.from === badSum && badSum === account.address) continue; // no letter at that index
    assert.equal(await recoverAuthorizationSigner(USDC, auth, s), null);
    assert.equal(await viemSigner(USDC, auth, s), null);
  }
  assert.equal(recoverPublicKey(new Uint8Array(31), hexToBytes(sig)), null);
});

test('when neither engine loads, viem recovers the same addresses', async (t) => {
  t.after(() => resetSecp256k1ForTests());
  resetSecp256k1ForTests([brokenNative(t), () => loadWasmEngine(new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]))]);
  assert.equal(secp256k1Engine(), null);
  assert.match(secp256k1LoadError() ?? '', /./);
  const account = privateKeyToAccount(generatePrivateKey());
  const a = randomAuth(account.address);
  const sig = await account.signTypedData(authorizationTypedData(USDC, a));
  assert.equal(recoverPublicKey(authorizationDigest(USDC, a)!, hexToBytes(sig)), undefined);
  assert.equal(await recoverAuthorizationSigner(USDC, a, sig), account.address.toLowerCase());
  resetSecp256k1ForTests();
  assert.equal(secp256k1Engine(), noPrebuild ? 'wasm' : 'native');
});
