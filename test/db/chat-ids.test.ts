import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parseDeliveryBody } from '../../src/delivery/schemas.ts';
import { MIGRATIONS, migrate } from '../../src/db/migrate.ts';
import { tempDir } from '../helpers/app.ts';

test('0012: registrations stored before it get the canonical chat id; ids of no known shape are left alone', (t) => {
  const db = new Database(join(tempDir(t), 'old.db'));
  const before = MIGRATIONS.indexOf('0012_chat_ids.sql');
  assert.ok(before > 0);
  migrate(db, { target: before, fromSchemaFile: false });
  const stored: [string, string][] = [
    ['007', '7'],
    ['+123456789', '123456789'],
    ['-001001234567890', '-1001234567890'],
    ['123456789', '123456789'],
    ['-1001234567890', '-1001234567890'],
    ['@Channel_Name', '@channel_name'],
    ['@already_lower', '@already_lower'],
    ['0', '0'],
    ['99999999999999999999', '99999999999999999999'],
    ['+-5', '+-5'],
    ['12ab', '12ab'],
  ];
  const insert = db.prepare(
    'INSERT INTO delivery_registrations (wallet, chat_id, city, created_at, updated_at) VALUES (?, ?, NULL, 1, 1)',
  );
  for (const [i, [chat]] of stored.entries()) insert.run(`0x${String(i).padStart(40, '0')}`, chat);
  migrate(db);
  const after = db.prepare('SELECT chat_id FROM delivery_registrations ORDER BY wallet').pluck().all() as string[];
  assert.deepEqual(
    after,
    stored.map(([, want]) => want),
  );
  // Whatever the migration folded is what the endpoint would store for that chat now.
  for (const [raw, want] of stored.slice(0, 7)) {
    const body = { wallet: `0x${'1'.repeat(40)}`, action: 'set', signature: '0x00', timestamp: 0, chatId: want };
    assert.equal(parseDeliveryBody(body).chat, want, `${raw} -> ${want} is canonical`);
  }
  db.close();
});
