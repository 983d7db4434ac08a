import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { createSingleUse } from '../../src/db/single-use.ts';
import { SIGNED_REQUEST_SKEW_SEC } from '../../src/lib/signed-request.ts';

const nowMs = 1_784_000_000_000;
const nowS = nowMs / 1000;
const wallet = `0x${'ab'.repeat(20)}`;

function tempDb(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-single-use-'));
  const db = openDb(join(dir, 'isocast.db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return db;
}
const count = (db: ReturnType<typeof openDb>, table: string) =>
  db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

test('a (wallet, timestamp) use: first true, second false, forgotten past twice the skew (seconds)', (t) => {
  const db = tempDb(t);
  const uses = createSingleUse<{ wallet: string; timestamp: number; used_at: number }>(db, {
    table: 'receipt_requests',
    key: ['wallet', 'timestamp'],
    columns: ['wallet', 'timestamp', 'used_at'],
    agedBy: { column: 'timestamp', unit: 's' },
  });
  const use = { wallet, timestamp: nowS, used_at: nowMs };
  assert.equal(uses.has({ wallet, timestamp: nowS }), false);
  assert.equal(uses.consume(use, nowMs), true, 'first use');
  assert.equal(uses.has({ wallet, timestamp: nowS }), true);
  assert.equal(uses.consume(use, nowMs), false, 'second use');
  assert.equal(uses.consume({ ...use, timestamp: nowS + 1 }, nowMs), true, 'another timestamp is another use');

  // Exactly twice the skew later the first row is still kept; one second more and it is dropped.
  const atEdge = nowMs + 2 * SIGNED_REQUEST_SKEW_SEC * 1000;
  assert.equal(uses.consume({ wallet, timestamp: atEdge / 1000, used_at: atEdge }, atEdge), true);
  assert.equal(count(db, 'receipt_requests'), 3);
  const past = atEdge + 1000;
  assert.equal(uses.consume({ wallet, timestamp: past / 1000, used_at: past }, past), true);
  assert.equal(uses.has({ wallet, timestamp: nowS }), false, 'forgotten after the prune');
  assert.equal(count(db, 'receipt_requests'), 3, 'nowS dropped; nowS + 1 is exactly at the cutoff and kept');
  // A second use is refused only while remembered: the clock rule refuses it first after that.
  assert.equal(uses.consume(use, past), true, 'after the prune the store alone no longer refuses it');
});

test('a refused second use writes nothing and prunes nothing', (t) => {
  const db = tempDb(t);
  const uses = createSingleUse<{ digest: string; wallet: string; used_at: number; expires_at: number }>(db, {
    table: 'delivery_signatures',
    key: ['digest'],
    columns: ['digest', 'wallet', 'used_at', 'expires_at'],
    agedBy: { column: 'expires_at', unit: 's' },
  });
  assert.equal(uses.consume({ digest: 'old', wallet, used_at: nowS, expires_at: nowS + 600 }, nowMs), true);
  const later = nowMs + 3 * SIGNED_REQUEST_SKEW_SEC * 1000 + 1000;
  assert.equal(
    uses.consume({ digest: 'new', wallet, used_at: later / 1000, expires_at: later / 1000 + 600 }, later),
    true,
  );
  assert.equal(uses.has({ digest: 'old' }), false, 'its expiry was more than twice the skew ago');
  assert.equal(
    uses.consume({ digest: 'new', wallet: 'someone else', used_at: later / 1000, expires_at: 0 }, later + 10_000_000),
    false,
  );
  assert.equal(count(db, 'delivery_signatures'), 1);
  assert.equal(
    db.prepare('SELECT wallet FROM delivery_signatures').pluck().get(),
    wallet,
    'the first use stays as written',
  );
});

test('a sign-in nonce ages by its expiry in milliseconds', (t) => {
  const db = tempDb(t);
  const uses = createSingleUse<{ wallet: string; nonce: string; expires_at: number; used_at: number }>(db, {
    table: 'siwx_nonces',
    key: ['wallet', 'nonce'],
    columns: ['wallet', 'nonce', 'expires_at', 'used_at'],
    agedBy: { column: 'expires_at', unit: 'ms' },
  });
  const first = { wallet, nonce: 'abcdef0123', expires_at: nowMs + 300_000, used_at: nowMs };
  assert.equal(uses.consume(first, nowMs), true);
  assert.equal(uses.consume(first, nowMs), false);
  const edge = first.expires_at + 2 * SIGNED_REQUEST_SKEW_SEC * 1000;
  assert.equal(uses.consume({ ...first, nonce: 'abcdef0124', expires_at: edge + 1 }, edge), true);
  assert.equal(uses.has({ wallet, nonce: first.nonce }), true, 'exactly at the cutoff: kept');
  assert.equal(uses.consume({ ...first, nonce: 'abcdef0125', expires_at: edge + 2 }, edge + 1), true);
  assert.equal(uses.has({ wallet, nonce: first.nonce }), false, 'one ms past: forgotten');
});
