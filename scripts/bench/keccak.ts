/**
 * Keccak-256 alone, in this process: nanoseconds per hash of src/lib/keccak.ts against viem's
 * `keccak256` (noble's permutation) on the paid path's input sizes (64 bytes: a signer's public
 * key; 66: the EIP-712 digest; 192: the authorization's struct), alternating bursts of the same
 * inputs. Prints JSON; the figure and the decision it backs are in docs/performance.md.
 *
 * node scripts/bench/keccak.ts '{"rounds":9,"burstMs":200}'
 */
import { randomBytes } from 'node:crypto';
import { keccak256 } from 'viem';
import { keccak256Bytes } from '../../src/lib/keccak.ts';
import { median } from './util.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as { rounds?: number; burstMs?: number };
const rounds = input.rounds ?? 9;
const burstMs = input.burstMs ?? 200;
const sizes = [64, 66, 192];
const inputs = sizes.map((n) => Array.from({ length: 64 }, () => new Uint8Array(randomBytes(n))));

for (const set of inputs)
  for (const b of set)
    if (Buffer.from(keccak256Bytes(b)).toString('hex') !== keccak256(b).slice(2)) throw new Error('hashes differ');

function burst(hash: (b: Uint8Array) => unknown, set: Uint8Array[]): number {
  let n = 0;
  const end = performance.now() + burstMs;
  const t0 = performance.now();
  while (performance.now() < end) {
    for (const b of set) hash(b);
    n += set.length;
  }
  return ((performance.now() - t0) * 1e6) / n;
}

const ours = (b: Uint8Array) => keccak256Bytes(b);
const viem = (b: Uint8Array) => keccak256(b, 'bytes');
const out: Record<string, { oursNs: number; viemNs: number; speedup: number }> = {};
sizes.forEach((size, i) => {
  const set = inputs[i]!;
  burst(ours, set);
  burst(viem, set);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      a.push(burst(ours, set));
      b.push(burst(viem, set));
    } else {
      b.push(burst(viem, set));
      a.push(burst(ours, set));
    }
  }
  const oursNs = Math.round(median(a));
  const viemNs = Math.round(median(b));
  out[`${size}B`] = { oursNs, viemNs, speedup: Math.round((viemNs / oursNs) * 100) / 100 };
});
console.log(JSON.stringify(out));
