import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import {
  createSIWxPayload,
  declareSIWxExtension,
  encodeSIWxHeader,
  SIGN_IN_WITH_X,
  type SIWxPayload,
} from '@x402/extensions/sign-in-with-x';
import {
  checkSiwxMessage,
  createSiwxSignIn,
  siwxExtension,
  SIWX_ERRORS,
  SIWX_HEADER as OUR_KEY,
} from '../../src/payments/siwx.ts';
import { chainVerifierFromConfig } from '../../src/payments/settlers/from-config.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDb } from '../../src/db/open.ts';
import { manualClock } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { loadSanctionsList } from '../../src/sanctions/list.ts';
import { createRetention } from '../../src/ops/retention.ts';
import { ApiError } from '../../src/lib/errors.ts';
import { tempDir } from '../helpers/app.ts';

/** The pure checks of a sign-in (siwx.ts) with the clock passed in, and the sign-in service over a real SQLite file. */
const BASE = 'https://isocast.example';
const NOW = Date.parse('2026-07-15T15:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const account = privateKeyToAccount(`0x${'3c'.repeat(32)}`);

test("the written-out declaration is the library's, byte for byte and in key order", () => {
  const { _options, ...library } = declareSIWxExtension({
    network: 'eip155:8453',
    expirationSeconds: 300, // the lifetime a 402 proposes; it reaches only `_options`
  })[SIGN_IN_WITH_X]!;
  assert.equal(OUR_KEY, SIGN_IN_WITH_X);
  // The declaration as a 402 carries it, less the fields filled per response.
  const { info, ...declared } = siwxExtension({ baseUrl: BASE, resourcePath: '/v1/signals', nowMs: NOW, nonce: 'n' })[
    OUR_KEY
  ]!;
  assert.equal(JSON.stringify({ info: { version: info.version }, ...declared }), JSON.stringify(library));
  assert.equal(Date.parse(info.expirationTime!) - Date.parse(info.issuedAt!), 300_000, 'the lifetime a 402 proposes');
});

function message(over: Partial<SIWxPayload> = {}): SIWxPayload {
  return {
    domain: 'isocast.example',
    address: account.address,
    uri: `${BASE}/v1/signals?city=nyc&count=20`,
    version: '1',
    chainId: 'eip155:8453',
    type: 'eip191',
    nonce: 'a1b2c3d4e5f6a7b8',
    issuedAt: iso(NOW),
    expirationTime: iso(NOW + 300_000),
    signature: '0x',
    ...over,
  };
}
const code = (m: SIWxPayload, nowMs = NOW, baseUrl = BASE) => checkSiwxMessage(m, { baseUrl, nowMs })?.code ?? null;

test('a sign-in bound to this server, on Base, inside its window passes', () => {
  assert.equal(checkSiwxMessage(message(), { baseUrl: BASE, nowMs: NOW }), null);
  assert.equal(code(message(), NOW + 299_000), null);
});

test('domain and uri must name BASE_URL', () => {
  const other = checkSiwxMessage(message({ domain: 'evil.example' }), { baseUrl: BASE, nowMs: NOW })!;
  assert.deepEqual([other.error, other.code], [SIWX_ERRORS.otherServer, 'invalid_siwx_domain_mismatch']);
  assert.match(other.reason!, /this server is https:\/\/isocast\.example/);
  assert.equal(code(message({ uri: 'https://evil.example/v1/signals' })), 'invalid_siwx_uri_mismatch');
  assert.equal(code(message({ uri: 'http://isocast.example/v1/signals' })), 'invalid_siwx_uri_mismatch', 'scheme');
  assert.equal(code(message({ uri: 'not a url' })), 'invalid_siwx_uri_mismatch');
  // A port is part of the host.
  assert.equal(code(message({ domain: 'isocast.example:8443' })), 'invalid_siwx_domain_mismatch');
  // BASE_URL with a path: the uri must be under it.
  const prefixed = 'https://isocast.example/api';
  assert.equal(code(message({ uri: 'https://isocast.example/api/v1/signals' }), NOW, prefixed), null);
  assert.equal(
    code(message({ uri: 'https://isocast.example/apix/v1/signals' }), NOW, prefixed),
    'invalid_siwx_uri_mismatch',
  );
});

test('chain, version, address and nonce', () => {
  assert.equal(code(message({ chainId: 'eip155:1' })), 'invalid_siwx_chain_id');
  assert.equal(
    code(message({ chainId: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', type: 'ed25519' })),
    'invalid_siwx_chain_id',
  );
  assert.equal(code(message({ version: '2' })), 'invalid_siwx_version');
  assert.equal(code(message({ address: 'nobody' })), 'invalid_siwx_address');
  assert.equal(code(message({ nonce: 'short' })), 'invalid_siwx_nonce');
  assert.equal(code(message({ nonce: 'has-dashes-1234' })), 'invalid_siwx_nonce');
  assert.equal(code(message({ nonce: 'a'.repeat(129) })), 'invalid_siwx_nonce');
});

test('expirationTime: required, in the future, at most 600 s after now and after issuedAt', () => {
  assert.equal(code(message({ expirationTime: undefined })), 'invalid_siwx_expiration_time');
  assert.equal(code(message({ expirationTime: 'tomorrow' })), 'invalid_siwx_expiration_time');
  assert.equal(code(message(), NOW + 300_000), 'invalid_siwx_expired', 'at the instant it expires');
  assert.equal(code(message({ expirationTime: iso(NOW + 600_000) })), null, 'exactly 600 s');
  assert.equal(code(message({ expirationTime: iso(NOW + 600_001) })), 'invalid_siwx_expiration_time');
  // Made to last a day: refused all day, its last ten minutes included.
  const daylong = message({ expirationTime: iso(NOW + 86_400_000) });
  assert.equal(code(daylong, NOW + 86_400_000 - 60_000), 'invalid_siwx_expiration_time');
});

test('issuedAt may lead server time by the signed-request skew (600 s), no more; notBefore must have passed', () => {
  const ahead = (s: number) => message({ issuedAt: iso(NOW + s * 1000), expirationTime: iso(NOW + s * 1000 + 20_000) });
  assert.equal(code(ahead(590)), 'invalid_siwx_expiration_time', 'its expiry is then past now + 600 s');
  assert.equal(code(message({ issuedAt: iso(NOW + 120_000) })), null, 'a client clock 2 minutes fast');
  const future = checkSiwxMessage(message({ issuedAt: iso(NOW + 601_000) }), { baseUrl: BASE, nowMs: NOW })!;
  assert.deepEqual([future.error, future.code], ['stale timestamp', 'invalid_siwx_issued_at_in_future']);
  assert.equal(code(message({ issuedAt: 'yesterday' })), 'invalid_siwx_issued_at');
  assert.equal(code(message({ notBefore: iso(NOW + 1000) })), 'invalid_siwx_not_yet_valid');
  assert.equal(code(message({ notBefore: iso(NOW - 1000) })), null);
});

test('the declaration is the library one with this server, a fresh nonce and a 300 s window filled in', () => {
  const ext = siwxExtension({
    baseUrl: BASE,
    resourcePath: '/v1/signals?city=nyc&count=20',
    nowMs: NOW,
    nonce: 'abcdef0123456789',
  });
  const d = ext['sign-in-with-x']!;
  assert.deepEqual(d.info, {
    version: '1',
    domain: 'isocast.example',
    uri: `${BASE}/v1/signals?city=nyc&count=20`,
    nonce: 'abcdef0123456789',
    issuedAt: iso(NOW),
    expirationTime: iso(NOW + 300_000),
  });
  assert.deepEqual(d.supportedChains, [{ chainId: 'eip155:8453', type: 'eip191' }]);
  assert.equal('_options' in d, false);
  assert.ok(d.schema.required.includes('signature'));
});

function signInEnv(t: Parameters<typeof tempDir>[0], verifyMessage?: (a: { address: string }) => Promise<boolean>) {
  const db = openDb(join(tempDir(t), 'isocast.db'));
  t.after(() => db.close());
  const clock = manualClock(NOW);
  const signIn = createSiwxSignIn({ db, clock, baseUrl: BASE, sanctions: loadSanctionsList({}), verifyMessage });
  return { db, clock, signIn };
}
const signed = async (over: Partial<SIWxPayload> = {}) => {
  const { signature: _s, address: _a, ...info } = message(over);
  return encodeSIWxHeader(await createSIWxPayload(info as never, account, `${BASE}/v1/signals`));
};
const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return { status: err.status, error: err.message, code: err.extra.code };
  }
  assert.fail('expected a refusal');
};

test('each (wallet, nonce) signs in once; the retention job deletes used nonces once expired', async (t) => {
  const { db, clock, signIn } = signInEnv(t);
  const header = await signed();
  assert.equal(await signIn(header), account.address.toLowerCase());
  assert.deepEqual(await refusal(signIn(header)), {
    status: 401,
    error: SIWX_ERRORS.nonceUsed,
    code: 'invalid_siwx_nonce',
  });
  assert.equal(await signIn(await signed({ nonce: 'ffffffff00000000' })), account.address.toLowerCase());

  const retention = createRetention({
    db,
    clock,
    logger: memoryLogger(),
    settings: { outboxDays: 0, failedPaymentDays: 0, receiptDays: 0 },
  });
  assert.equal((await retention.runOnce()).siwxNonces, 0, 'not yet expired');
  clock.advance(300_001);
  assert.equal((await retention.runOnce()).siwxNonces, 2);
  assert.equal((db.prepare('SELECT count(*) AS n FROM siwx_nonces').get() as { n: number }).n, 0);
});

test("a signature that does not recover goes to the chain client's verifyMessage (ERC-1271/6492); EOAs never do", async (t) => {
  const asked: string[] = [];
  const smart = '0x00000000000000000000000000000000000c0de1';
  const { signIn } = signInEnv(t, async (a) => {
    asked.push(a.address.toLowerCase());
    return a.address.toLowerCase() === smart;
  });
  assert.equal(await signIn(await signed()), account.address.toLowerCase());
  assert.deepEqual(asked, [], 'an EOA signature verifies without RPC');
  // A contract wallet: the signature is the contract's business; here the chain client says yes.
  const payload = JSON.parse(Buffer.from(await signed({ nonce: 'c0ffee0000000001' }), 'base64').toString());
  payload.address = smart;
  assert.equal(await signIn(Buffer.from(JSON.stringify(payload)).toString('base64')), smart);
  assert.deepEqual(asked, [smart]);

  const { signIn: down } = signInEnv(t, async () => {
    throw new Error('rpc unreachable');
  });
  payload.nonce = 'c0ffee0000000002';
  assert.deepEqual((await refusal(down(Buffer.from(JSON.stringify(payload)).toString('base64')))).status, 503);
});

test('live mode with RPC_URL builds the chain client with verifyMessage; mock mode has none', (t) => {
  const live = { PAYMENT_MODE: 'live', RPC_URL: 'http://127.0.0.1:9' } as Config;
  assert.equal(typeof chainVerifierFromConfig(live)?.verifyMessage, 'function');
  assert.equal(chainVerifierFromConfig(loadConfig({ DATA_DIR: tempDir(t) })), undefined);
});
