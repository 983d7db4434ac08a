import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.ts';
import { startFakeFacilitator } from '../fakes/facilitator.ts';
import { createFacilitatorSettler } from '../../src/payments/settlers/facilitator.ts';
import { createFailoverSettler } from '../../src/payments/settlers/failover.ts';
import { facilitatorList } from '../../src/payments/settlers/from-config.ts';
import { loadConfig } from '../../src/config.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { paymentBackends } from '../../src/payments/backends.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { buyerA, buyerB, inApp, signFor, subscribeWith } from './buy.ts';

/**
 * Issue 36 item 3 without a chain: FACILITATOR_URL's list, each with its own auth; a facilitator
 * that is unreachable, answers /verify with 5xx or lists nothing we need in /supported is skipped
 * for the next one in the same request; one that may have broadcast stays in doubt (the next one
 * is not asked); health per facilitator in /admin, one warning a minute. The drill on a real chain
 * with the reference facilitators is test/chain/facilitator-failover.test.ts.
 */
const ADMIN_TOKEN = 'a'.repeat(40);

async function fronts(t: { after(fn: () => Promise<void>): void }) {
  const dead = await startFakeFacilitator('ok');
  await dead.close();
  const broken = await startFakeFacilitator('http-500');
  const none = await startFakeFacilitator('ok');
  none.supported = { kinds: [{ x402Version: 1, scheme: 'exact', network: 'solana' }] };
  const good = await startFakeFacilitator('ok');
  t.after(async () => {
    await Promise.all([broken.close(), none.close(), good.close()]);
  });
  return { dead, broken, none, good };
}

test('FACILITATOR_URL is an ordered list with one auth per place', () => {
  const c = loadConfig({
    PAYMENT_MODE: 'live',
    FEED: 'live',
    PAY_TO: `0x${'11'.repeat(20)}`,
    OFAC_REQUIRED: 'false',
    FACILITATOR_URL: 'https://one.example/x402, https://u:p@two.example,https://three.example',
    FACILITATOR_AUTH: 'Bearer one,,Bearer three',
  });
  assert.deepEqual(facilitatorList(c), [
    { url: 'https://one.example/x402', auth: 'Bearer one', cdp: false },
    { url: 'https://u:p@two.example', cdp: false },
    { url: 'https://three.example', auth: 'Bearer three', cdp: false },
  ]);
  // One URL takes the whole value, commas included, as before.
  const one = loadConfig({ FACILITATOR_URL: 'https://one.example', FACILITATOR_AUTH: 'Basic a,b' });
  assert.deepEqual(facilitatorList(one), [{ url: 'https://one.example', auth: 'Basic a,b', cdp: true }]);
  assert.throws(() => loadConfig({ FACILITATOR_URL: 'https://one.example,ftp://two' }), /absolute http\(s\) URL/);
});

test('unreachable, /verify 5xx, and /supported without our kind are skipped within the request; the next one settles', async (t) => {
  const f4 = await fronts(t);
  const list = [f4.dead, f4.broken, f4.none, f4.good];
  const e = testApp(t, { nowMs: Date.now(), env: { ADMIN_TOKEN } });
  const settler = createFailoverSettler(
    list.map((x, i) => ({
      name: `f${i + 1}`,
      settler: createFacilitatorSettler({ url: x.url, auth: `Bearer f${i + 1}`, status: x.status, verify: 'always' }),
    })),
    { now: () => e.clock.now(), logger: e.logger },
  );
  t.after(() => settler.close?.());
  const { createApp } = await import('../../src/app.ts');
  const f = inApp(createApp({ ...e.deps, settler }));

  for (const [i, buyer] of [buyerA, buyerB].entries()) {
    const p = await signFor(f, buyer, 'nyc', 20, e.clock.now());
    const r = await subscribeWith(f, p.xPayment, 'nyc', 20);
    assert.deepEqual([r.status, r.body.idempotent], [200, false], JSON.stringify(r.body));
    assert.equal(f4.good.requests.filter((q) => q.path === '/settle').length, i + 1);
  }
  // Each was sent its own auth; the broken one only /verify (nothing that moves money); the one
  // without our kind nothing at all.
  assert.ok(f4.good.requests.every((q) => q.authorization === 'Bearer f4'));
  assert.deepEqual(
    f4.broken.requests.map((q) => [q.path, q.authorization]),
    [['/verify', 'Bearer f2']],
    'down after the first payment: the second asks the ones still up first',
  );
  assert.equal(f4.none.requests.length, 0);
  const health = settler.health();
  assert.deepEqual(
    health.map((h) => [h.name, h.up, h.answered, h.skipped]),
    [
      ['f1', false, 0, 1],
      ['f2', false, 0, 1],
      ['f3', false, 0, 1],
      ['f4', true, 2, 0],
    ],
  );
  assert.match(health[0]!.reason!, /ECONNREFUSED/);
  assert.match(health[1]!.reason!, /HTTP 500/);
  assert.match(health[2]!.reason!, /lists neither/);
  const warned = e.logger.lines.filter((l) => l.includes('facilitator unavailable; the next one is asked'));
  assert.equal(warned.length, 3, 'one warning per facilitator, not one per request');

  const admin = await f('/admin/data.json', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const data = (await admin.json()) as { facilitators: { name: string; up: boolean; downSince: string | null }[] };
  assert.deepEqual(
    data.facilitators.map((x) => [x.name, x.up]),
    [
      ['f1', false],
      ['f2', false],
      ['f3', false],
      ['f4', true],
    ],
  );
  assert.match(data.facilitators[0]!.downSince!, /^\d{4}-\d\d-\d\dT/);
});

test('a facilitator that may have broadcast stays in doubt: the next one is not asked', async (t) => {
  const first = await startFakeFacilitator('settle-then-502');
  const second = await startFakeFacilitator('ok');
  t.after(async () => {
    await Promise.all([first.close(), second.close()]);
  });
  const e = testApp(t, { nowMs: Date.now() });
  // The chain the first one transferred on answers "unused" while the transfer is unseen here.
  const settler = createFailoverSettler(
    [first, second].map((x, i) => ({
      name: `f${i + 1}`,
      settler: createFacilitatorSettler({
        url: x.url,
        status: async () => ({ state: 'unknown', reason: 'rpc down' }),
      }),
    })),
    { now: () => e.clock.now() },
  );
  t.after(() => settler.close?.());
  const { createApp } = await import('../../src/app.ts');
  const f = inApp(createApp({ ...e.deps, settler }));
  const p = await signFor(f, buyerA, 'nyc', 20, e.clock.now());
  const r = await subscribeWith(f, p.xPayment, 'nyc', 20);
  assert.deepEqual([r.status, r.body.error], [503, PAYMENT_ERRORS.pending]);
  assert.equal(second.requests.length, 0, 'never a second settle for one authorization');
  assert.equal(settler.health()[0]!.up, true, 'it answered (unclearly): not skipped');
});

test('/metrics: isocast_facilitator_up per FACILITATOR_URL entry, read at scrape', async (t) => {
  const { dead, good } = await fronts(t);
  const metrics = createMetrics();
  const config = loadConfig({
    PAYMENT_MODE: 'live',
    FEED: 'live',
    PAY_TO: `0x${'11'.repeat(20)}`,
    OFAC_REQUIRED: 'false',
    RPC_URL: 'http://127.0.0.1:9',
    FACILITATOR_URL: `${dead.url},${good.url}`,
  });
  const { settler } = await paymentBackends(config, { metrics });
  t.after(() => settler.close?.());
  const text = metrics.render();
  for (const url of [dead.url, good.url])
    assert.ok(text.includes(`isocast_facilitator_up{facilitator="${url}"} 1`), text);
});
