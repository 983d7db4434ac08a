import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { checkSignedRequest, SIGNED_REQUEST_SKEW_SEC } from '../../src/lib/signed-request.ts';
import { createReceiptRequestStore } from '../../src/payments/receipt-request.ts';

const nowMs = 1_784_000_000_000;
const nowS = nowMs / 1000;

test('checkSignedRequest: the clock first (a stale body costs no signature check), then the signature', async () => {
  let verified = 0;
  const verify = async () => {
    verified++;
    return false;
  };
  await assert.rejects(checkSignedRequest({ nowMs, timestamp: nowS - SIGNED_REQUEST_SKEW_SEC - 1, verify }), {
    message: 'stale timestamp',
  });
  assert.equal(verified, 0);
  await assert.rejects(
    checkSignedRequest({ nowMs, timestamp: nowS + SIGNED_REQUEST_SKEW_SEC, verify, refusedFor: () => 'why' }),
    (err: any) => err.message === 'signature verification failed' && err.status === 401,
  );
  assert.equal(verified, 1);
  await checkSignedRequest({ nowMs, timestamp: nowS - SIGNED_REQUEST_SKEW_SEC, verify: async () => true });
});

test('the receipt request store consumes each (wallet, timestamp) once per kind and drops rows past twice the skew', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-signed-'));
  const db = openDb(join(dir, 'isocast.db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const used = createReceiptRequestStore(db);
  const wallet = `0x${'ab'.repeat(20)}`;
  assert.equal(used.consume({ kind: 'request', wallet, timestamp: nowS, nowMs }), true);
  assert.equal(used.consume({ kind: 'request', wallet, timestamp: nowS, nowMs }), false);
  // A revocation signed at the same instant is another kind of use.
  assert.equal(used.consume({ kind: 'revocation', wallet, timestamp: nowS, nowMs }), true);
  assert.equal(used.consume({ kind: 'revocation', wallet, timestamp: nowS, nowMs }), false);
  const later = nowMs + (2 * SIGNED_REQUEST_SKEW_SEC + 1) * 1000;
  assert.equal(used.consume({ kind: 'request', wallet, timestamp: later / 1000, nowMs: later }), true);
  const left = db.prepare('SELECT count(*) AS n FROM receipt_requests').get() as { n: number };
  assert.equal(left.n, 1);
});
