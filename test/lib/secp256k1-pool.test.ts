import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hexToBytes, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { createRecoveryPool, recoveryThreads } from '../../src/lib/secp256k1-pool.ts';
import { recoverPublicKeyWasm } from '../../src/lib/secp256k1.ts';

type Case = { hash: Uint8Array; sig: Uint8Array; key: Uint8Array | null };

/** Signed hashes with their signers' keys, plus signatures that recover to nothing. */
async function cases(n: number): Promise<Case[]> {
  const out: Case[] = [];
  for (let i = 0; i < n; i++) {
    const pk = generatePrivateKey();
    const hash = new Uint8Array(randomBytes(32));
    const sig = hexToBytes(
      (await sign({ hash: `0x${Buffer.from(hash).toString('hex')}` as Hex, privateKey: pk, to: 'hex' })) as Hex,
    );
    out.push({ hash, sig, key: hexToBytes(privateKeyToAccount(pk).publicKey).subarray(1) });
    const bad = sig.slice();
    bad[64] = 31; // no such recovery id
    out.push({ hash, sig: bad, key: null });
    out.push({ hash, sig: new Uint8Array(65).fill(0xff), key: null }); // r, s above the curve order
  }
  return out;
}

const same = (a: Uint8Array | null | undefined, b: Uint8Array | null) =>
  a === null || b === null ? a === b : a !== undefined && Buffer.compare(a, b) === 0;

test('spare cores: none on one core, the spare one on two, at most two', () => {
  assert.equal(recoveryThreads(1), 0);
  assert.equal(recoveryThreads(2), 1);
  assert.equal(recoveryThreads(3), 2);
  assert.equal(recoveryThreads(64), 2);
});

test('a worker thread recovers exactly what the inline engine does, many requests in flight', async (t) => {
  const pool = createRecoveryPool({ threads: 2 });
  t.after(() => pool.close());
  const all = await cases(40);
  const got = await Promise.all(all.map((c) => pool.recover(c.hash, c.sig)));
  assert.equal(pool.threads(), 2);
  for (const [i, c] of all.entries()) {
    assert.ok(same(got[i], c.key), `case ${i}`);
    assert.ok(same(recoverPublicKeyWasm(c.hash, c.sig), c.key), `inline case ${i}`);
  }
  // Malformed lengths never reach a thread.
  assert.equal(await pool.recover(new Uint8Array(31), all[0]!.sig), null);
  assert.equal(await pool.recover(all[0]!.hash, all[0]!.sig.subarray(0, 64)), null);
});

test('threads: 0 recovers inline (the one-core machine)', async () => {
  const pool = createRecoveryPool({ threads: 0 });
  const [c] = await cases(1);
  assert.ok(same(await pool.recover(c!.hash, c!.sig), c!.key));
  assert.equal(pool.threads(), 0);
  await pool.close();
});

test('a worker that cannot start: every request is still answered, inline, and the pool stays inline', async () => {
  const pool = createRecoveryPool({ threads: 1, workerSource: 'throw new Error("no thread for you")' });
  const all = await cases(5);
  const got = await Promise.all(all.map((c) => pool.recover(c.hash, c.sig)));
  for (const [i, c] of all.entries()) assert.ok(same(got[i], c.key), `case ${i}`);
  assert.equal(pool.threads(), 0);
  const [c] = await cases(1);
  assert.ok(same(await pool.recover(c!.hash, c!.sig), c!.key));
  await pool.close();
});

test('a worker that dies holding requests: they are recovered inline, none is lost', async () => {
  const dies = `require('node:worker_threads').parentPort.on('message', () => process.exit(3));`;
  const pool = createRecoveryPool({ threads: 1, workerSource: dies });
  const all = await cases(8);
  const got = await Promise.all(all.map((c) => pool.recover(c.hash, c.sig)));
  for (const [i, c] of all.entries()) assert.ok(same(got[i], c.key), `case ${i}`);
  assert.equal(pool.threads(), 0);
  await pool.close();
});

test('past the bound a thread may owe, recovery runs inline: a flood meets backpressure, not a growing queue', async () => {
  // A thread that never answers: whatever it is owed waits; everything past the bound must not.
  const silent = "require('node:worker_threads').parentPort.on('message', () => {});";
  const pool = createRecoveryPool({ threads: 1, workerSource: silent, maxOwedPerThread: 2 });
  const all = (await cases(2)).filter((c) => c.key !== null);
  const owed = [pool.recover(all[0]!.hash, all[0]!.sig), pool.recover(all[1]!.hash, all[1]!.sig)];
  const past = await Promise.all(all.map((c) => pool.recover(c.hash, c.sig)));
  for (const [i, c] of all.entries()) assert.ok(same(past[i], c.key), `inline past the bound, case ${i}`);
  assert.equal(pool.threads(), 1, 'the thread is alive: these ran inline because of the bound');
  // Closing the pool answers what the thread still owed, inline.
  await pool.close();
  const late = await Promise.all(owed);
  for (const [i, c] of all.entries()) assert.ok(same(late[i], c.key), `owed case ${i}`);
});
