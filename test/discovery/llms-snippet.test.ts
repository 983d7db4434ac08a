import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { tempDir } from '../helpers/app.ts';
import { startServer } from '../chaos/server.ts';
import { compileCacheEnv } from '../helpers/child-env.ts';

/**
 * The TypeScript snippet in /llms-full.txt is what agents copy: it must buy for real (binding the
 * nonce and echoing payload.salt), read with the token, and recover a token with POST /v1/receipts.
 */
const ROOT = join(import.meta.dirname, '..', '..');

test('the /llms-full.txt TypeScript snippet buys, reads and recovers a receipt against a real server', async (t) => {
  const server = await startServer({
    dataDir: tempDir(t),
    env: { PAYMENT_MODE: 'mock', FEED: 'sim', LOG_LEVEL: 'warn' },
  });
  t.after(() => server.kill('SIGTERM'));
  const full = await (await fetch(`${server.baseUrl}/llms-full.txt`)).text();
  // The raw-HTTP snippet (the one that also recovers a receipt); the @x402/fetch one is tested in test/buyer.
  const code = [...full.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((c) => /\brecovered\b/.test(c));
  assert.ok(code, 'a ts code block');
  // Inside the repository so `viem` resolves from its node_modules.
  const dir = mkdtempSync(join(ROOT, '.llms-snippet-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'snippet.mts');
  writeFileSync(file, `${code}\nconsole.log(JSON.stringify({ bought, page, recovered }));\n`);
  const r = spawnSync(join(ROOT, 'node_modules', '.bin', 'node'), [file], {
    env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), KEY: `0x${'c3'.repeat(32)}` },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  assert.equal(out.bought.ok, true, JSON.stringify(out.bought));
  assert.equal(out.bought.idempotent, false);
  assert.match(out.bought.receiptToken, /^isr_/);
  assert.ok(Array.isArray(out.page.signals));
  assert.equal(out.recovered.ok, true, JSON.stringify(out.recovered));
  assert.deepEqual(out.recovered.cities, [{ city: 'nyc', paidThroughSeq: out.bought.paidThroughSeq }]);
});
