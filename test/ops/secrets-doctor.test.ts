import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Address, Hex } from 'viem';
import { type ConfigError, loadConfig } from '../../src/config.ts';
import { SCHEMA_VERSION, migrate, schemaVersion } from '../../src/db/migrate.ts';
import { httpRequest } from '../../src/lib/http-client.ts';
import { redactUrl, splitCredentials } from '../../src/lib/url-credentials.ts';
import { createProofReader } from '../../src/payments/settlers/chain-proof.ts';
import { listen, tempDir } from '../helpers/app.ts';

const TOKEN = 'f'.repeat(16) + '0123456789abcdef0123';

test('every secret can come from NAME_FILE (systemd credentials): trailing newline trimmed, flag form allowed for the path', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'admin-token');
  writeFileSync(file, `${TOKEN}\n`);
  assert.equal(loadConfig({ ADMIN_TOKEN_FILE: file }).ADMIN_TOKEN, TOKEN);
  assert.equal(
    loadConfig({}, ['--admin-token-file', file]).ADMIN_TOKEN,
    TOKEN,
    'a path is not a secret, so it may be a flag',
  );
  const key = join(dir, 'key');
  writeFileSync(key, `0x${'ab'.repeat(32)}\r\n`);
  writeFileSync(join(dir, 'secret'), 'cd'.repeat(32));
  const c = loadConfig({ SETTLER_PRIVATE_KEY_FILE: key, SERVER_SECRET_FILE: join(dir, 'secret') });
  assert.equal(c.SETTLER_PRIVATE_KEY, `0x${'ab'.repeat(32)}`);
  assert.equal(c.SERVER_SECRET, 'cd'.repeat(32));

  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };
  assert.deepEqual(problems({ ADMIN_TOKEN: TOKEN, ADMIN_TOKEN_FILE: file }), [
    'ADMIN_TOKEN_FILE: set ADMIN_TOKEN or ADMIN_TOKEN_FILE, not both',
  ]);
  assert.deepEqual(problems({ WU_API_KEY_FILE: join(dir, 'nope') }), [
    `WU_API_KEY_FILE: cannot read ${join(dir, 'nope')}: ENOENT`,
  ]);
  writeFileSync(join(dir, 'empty'), '\n');
  assert.deepEqual(problems({ MESSENGER_BOT_TOKEN_FILE: join(dir, 'empty') }), [
    `MESSENGER_BOT_TOKEN_FILE: ${join(dir, 'empty')} is empty`,
  ]);
  // A file's secret passes the same rules as the variable.
  writeFileSync(join(dir, 'short'), 'short\n');
  assert.match(problems({ ADMIN_TOKEN_FILE: join(dir, 'short') })[0]!, /^ADMIN_TOKEN: must be at least 32 characters/);
});

test('credentials in FACILITATOR_URL reach the facilitator as Basic auth, never in the URL', async (t) => {
  const seen: { auth: string | null; url: string }[] = [];
  const base = await listen(t, (req) => {
    seen.push({ auth: req.headers.get('authorization'), url: req.url });
    return Response.json({ ok: true });
  });
  const withCreds = base.replace('http://', 'http://fac%40user:p%3Ass@');
  const res = await httpRequest({
    upstream: 'facilitator',
    url: `${withCreds}/verify`,
    method: 'POST',
    body: {},
    timeoutMs: 2000,
  });
  assert.equal(res.status, 200);
  assert.equal(seen[0]!.auth, `Basic ${Buffer.from('fac@user:p:ss').toString('base64')}`);
  assert.ok(!seen[0]!.url.includes('p%3Ass'));
  // An explicit Authorization header (FACILITATOR_AUTH) is never overridden.
  await httpRequest({
    upstream: 'facilitator',
    url: withCreds,
    headers: { Authorization: 'Bearer x' },
    timeoutMs: 2000,
  });
  assert.equal(seen[1]!.auth, 'Bearer x');
  assert.deepEqual(splitCredentials('https://host/x'), { url: 'https://host/x' });
});

test('credentials in RPC_URL reach the node as Basic auth', async (t) => {
  let auth: string | null = null;
  const rpc = await listen(t, async (req) => {
    auth = req.headers.get('authorization');
    const { id } = (await req.json()) as { id: number };
    return Response.json({ jsonrpc: '2.0', id, result: '0x' + '0'.repeat(64) });
  });
  const lookup = createProofReader({
    rpcUrl: rpc.replace('http://', 'http://node:s3cret@'),
    usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as Address,
  });
  // The fake node answers every call with a zero word, so the lookup cannot conclude; what matters
  // here is the header the node received.
  await lookup.status(('0x' + '11'.repeat(20)) as Address, ('0x' + '22'.repeat(32)) as Hex, {
    validBefore: 0,
    payTo: ('0x' + '33'.repeat(20)) as Address,
    value: 1n,
  });
  assert.equal(auth, `Basic ${Buffer.from('node:s3cret').toString('base64')}`);
});

test('URLs are printed without credentials, query values or key-like path segments', () => {
  assert.equal(
    redactUrl('https://u:pw@base-mainnet.g.alchemy.com/v2/AbCdEf0123456789XyZ'),
    'https://***@base-mainnet.g.alchemy.com/v2/***',
  );
  assert.equal(redactUrl('https://rpc.example/?apikey=abc&x=1'), 'https://rpc.example/?apikey=***&x=***');
  assert.equal(redactUrl('https://aviationweather.gov'), 'https://aviationweather.gov');
});

test('doctor: read-only (an older schema is reported, not migrated), redacted, and an empty sanctions list fails', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'isocast.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  migrate(db, { target: SCHEMA_VERSION - 1, fromSchemaFile: false });
  db.close();
  writeFileSync(join(dir, 'sdn.txt'), '');
  const fac = 'Bearer facilitator-secret-value-42';
  const r = spawnSync(process.execPath, ['src/main.ts', 'doctor'], {
    env: {
      ...process.env,
      DATA_DIR: dir,
      OFAC_LIST_PATH: join(dir, 'sdn.txt'),
      ADMIN_TOKEN: TOKEN,
      FACILITATOR_AUTH: fac,
      RPC_URL: 'http://node:rpc-password@127.0.0.1:9/v2/AbCdEf0123456789XyZ',
      FACILITATOR_URL: 'http://127.0.0.1:9/?token=abc123',
      PAYMENT_MODE: 'mock',
      FEED: 'sim',
      MESSENGER_BOT_TOKEN: '',
      LOG_LEVEL: 'error',
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const out = r.stdout + r.stderr;
  assert.match(
    out,
    new RegExp(
      `\\[warn\\] database +${path.replace(/[.]/g, '\\.')}: quick_check ok, schema v${SCHEMA_VERSION - 1}/${SCHEMA_VERSION}, journal wal: older than this binary, not migrated`,
    ),
  );
  assert.match(out, /\[FAIL\] sanctions list +sanctions list .* holds no addresses .*nothing would be screened/);
  assert.match(out, /rpc +http:\/\/\*\*\*@127\.0\.0\.1:9\/v2\/\*\*\* \(not used/);
  assert.match(out, /facilitator +http:\/\/127\.0\.0\.1:9\/\?token=\*\*\* \(not used/);
  for (const leak of ['rpc-password', 'AbCdEf0123456789XyZ', 'abc123', fac, TOKEN])
    assert.ok(!out.includes(leak), `printed ${leak}`);
  const after = new Database(path, { readonly: true });
  assert.equal(schemaVersion(after), SCHEMA_VERSION - 1, 'doctor left user_version unchanged');
  after.close();
});
