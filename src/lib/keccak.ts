/**
 * Keccak-256 (padding 0x01, not SHA3's 0x06); Node's OpenSSL has none. Every lane is a local and
 * the round is generated once from FIPS 202 3.2, several times faster than viem's. Lanes are two
 * 32-bit halves: V8 has no fast 64-bit integers.
 */
const RATE = 136; // bytes: 1600 - 2 x 256 bits of capacity

/** ρ rotation offsets by lane index x + 5y (FIPS 202 3.2.2). */
const RHO = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];

/** ι round constants (FIPS 202 3.2.5), each as its [lo, hi] 32-bit halves. */
const RC = Int32Array.from([
  0x1, 0x0, 0x8082, 0x0, 0x808a, 0x80000000, 0x80008000, 0x80000000, 0x808b, 0x0, 0x80000001, 0x0, 0x80008081,
  0x80000000, 0x8009, 0x80000000, 0x8a, 0x0, 0x88, 0x0, 0x80008009, 0x0, 0x8000000a, 0x0, 0x8000808b, 0x0, 0x8b,
  0x80000000, 0x8089, 0x80000000, 0x8003, 0x80000000, 0x8002, 0x80000000, 0x80, 0x80000000, 0x800a, 0x0, 0x8000000a,
  0x80000000, 0x80008081, 0x80000000, 0x8080, 0x80000000, 0x80000001, 0x0, 0x80008008, 0x80000000,
]);

/** Source of `lo` and `hi` of (l, h) rotated left by n bits, as two expressions. */
function rotl(l: string, h: string, n: number): [string, string] {
  if (n === 0) return [l, h];
  if (n === 32) return [h, l];
  if (n < 32) return [`(${l} << ${n}) | (${h} >>> ${32 - n})`, `(${h} << ${n}) | (${l} >>> ${32 - n})`];
  const m = n - 32;
  return [`(${h} << ${m}) | (${l} >>> ${32 - m})`, `(${l} << ${m}) | (${h} >>> ${32 - m})`];
}

/** One function `(state: Int32Array(50), rc: Int32Array(48)) => void`: the 24 rounds of Keccak-f[1600]. */
function generatePermutation(): (s: Int32Array, rc: Int32Array) => void {
  const lanes = [...Array(25).keys()];
  const L = (i: number) => `l${i}`;
  const H = (i: number) => `h${i}`;
  const src: string[] = [];
  src.push(`let ${lanes.map((i) => `${L(i)} = s[${2 * i}] | 0, ${H(i)} = s[${2 * i + 1}] | 0`).join(', ')};`);
  src.push(`let ${lanes.map((i) => `b${2 * i} = 0, b${2 * i + 1} = 0`).join(', ')};`);
  src.push('let c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, dl, dh;');
  src.push('for (let r = 0; r < 48; r += 2) {');
  // θ: each column's parity, folded into the two neighbouring columns.
  for (let x = 0; x < 5; x++) {
    src.push(`c${2 * x} = ${[0, 5, 10, 15, 20].map((o) => L(x + o)).join(' ^ ')};`);
    src.push(`c${2 * x + 1} = ${[0, 5, 10, 15, 20].map((o) => H(x + o)).join(' ^ ')};`);
  }
  for (let x = 0; x < 5; x++) {
    const p = (x + 4) % 5;
    const n = (x + 1) % 5;
    const [rl, rh] = rotl(`c${2 * n}`, `c${2 * n + 1}`, 1);
    src.push(`dl = c${2 * p} ^ (${rl}); dh = c${2 * p + 1} ^ (${rh});`);
    for (let y = 0; y < 5; y++) src.push(`${L(x + 5 * y)} ^= dl; ${H(x + 5 * y)} ^= dh;`);
  }
  // ρ and π: lane (x, y) rotated into position (y, 2x + 3y).
  for (let x = 0; x < 5; x++)
    for (let y = 0; y < 5; y++) {
      const to = y + 5 * ((2 * x + 3 * y) % 5);
      const [rl, rh] = rotl(L(x + 5 * y), H(x + 5 * y), RHO[x + 5 * y]!);
      src.push(`b${2 * to} = ${rl}; b${2 * to + 1} = ${rh};`);
    }
  // χ: each row mixed with its next two lanes.
  for (let y = 0; y < 5; y++)
    for (let x = 0; x < 5; x++) {
      const i = x + 5 * y;
      const a = ((x + 1) % 5) + 5 * y;
      const b = ((x + 2) % 5) + 5 * y;
      src.push(
        `${L(i)} = b${2 * i} ^ (~b${2 * a} & b${2 * b}); ${H(i)} = b${2 * i + 1} ^ (~b${2 * a + 1} & b${2 * b + 1});`,
      );
    }
  // ι
  src.push('l0 ^= rc[r]; h0 ^= rc[r + 1];');
  src.push('}');
  src.push(lanes.map((i) => `s[${2 * i}] = ${L(i)}; s[${2 * i + 1}] = ${H(i)};`).join(' '));
  return new Function('s', 'rc', src.join('\n')) as (s: Int32Array, rc: Int32Array) => void;
}

// Generated on the first hash: compiling it was about 0.8 ms of the binary's start.
let permuteFn: ((s: Int32Array, rc: Int32Array) => void) | undefined;
const state = new Int32Array(50);

/** XORs `len` bytes of `data` from `at` into the state, little-endian lanes (len <= RATE). */
function absorb(data: Uint8Array, at: number, len: number): void {
  for (let i = 0; i < len; i++) state[i >> 2]! ^= data[at + i]! << ((i & 3) << 3);
}

/** Keccak-256 of `data`: 32 bytes. */
export function keccak256Bytes(data: Uint8Array): Uint8Array {
  if (!permuteFn) permuteFn = generatePermutation();
  const permute = permuteFn;
  state.fill(0);
  let at = 0;
  for (; data.length - at >= RATE; at += RATE) {
    absorb(data, at, RATE);
    permute(state, RC);
  }
  const rest = data.length - at;
  absorb(data, at, rest);
  state[rest >> 2]! ^= 0x01 << ((rest & 3) << 3);
  state[(RATE - 1) >> 2]! ^= 0x80 << (((RATE - 1) & 3) << 3);
  permute(state, RC);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = state[i >> 2]! >>> ((i & 3) << 3);
  return out;
}

/** Keccak-256 of `data` as 0x-prefixed lowercase hex. */
export function keccak256Hex(data: Uint8Array): `0x${string}` {
  return `0x${Buffer.from(keccak256Bytes(data).buffer).toString('hex')}`;
}
