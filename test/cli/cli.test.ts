import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { privateKeyToAccount } from 'viem/accounts';
import { listen, tempDir, testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { crossings } from '../helpers/crossings.ts';
import type { CliCommand } from '../../src/buyer/cli/help.ts';
import { runCli } from '../../src/buyer/cli/index.ts';
import type { CliIo } from '../../src/buyer/cli/output.ts';

/** The buyer commands in-process against a real app on a real socket, with real signatures. */
const KEY = `0x${'c3'.repeat(32)}`;
const WALLET = privateKeyToAccount(KEY as `0x${string}`).address;

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

type Run = { code: number; out: string[]; err: string[] };

async function setup(t: Parameters<typeof testApp>[0], env: Record<string, string> = {}) {
  // Listening first: the app's BASE_URL is the address the CLI talks to, the origin its receipt
  // signatures name (issue 23 item 5).
  let handler: (req: Request) => Response | Promise<Response> = () => new Response(null, { status: 503 });
  const server = await listen(t, (req) => handler(req));
  const app = testApp(t, { env: { BASE_URL: server, ...env } });
  handler = app.app.fetch;
  const dir = tempDir(t, 'isocast-cli-');
  const receipts = join(dir, 'wallet', 'receipts.json');
  const run = async (command: CliCommand, args: string[], io: Partial<CliIo> = {}): Promise<Run> => {
    const out: string[] = [];
    const err: string[] = [];
    // Defaults first: a case's own --server or --receipts comes later and wins.
    const code = await runCli(
      command,
      ['--server', server, ...(command === 'register-chat' ? [] : ['--receipts', receipts]), ...args],
      {
        stdout: (l) => out.push(l),
        stderr: (l) => err.push(l),
        envKey: KEY,
        nowMs: () => app.clock.now(),
        stateHome: join(dir, 'state'),
        ...io,
      },
    );
    return { code, out, err };
  };
  return { app, server, dir, receipts, run };
}

test('buy pays the 402 with a bound nonce and keeps the receipt in a private file', async (t) => {
  const { app, receipts, run } = await setup(t);
  insertSignals(app.db, 'nyc', 3);
  const r = await run('buy', ['--city', 'nyc', '--count', '20']);
  assert.equal(r.code, 0, r.err.join('\n'));
  assert.match(r.out[0]!, /^bought 20 nyc signals at 0\.005 USDC each \(0\.1 USDC\)$/);
  assert.ok(
    r.err.some((l) => /^warning: this server runs in mock payment mode/.test(l)),
    'a demo server is named as one before signing',
  );
  assert.match(r.out[1]!, /^entitled through seq 23 \(latest now 3\)/);
  assert.equal(statSync(receipts).mode & 0o777, 0o600);
  assert.equal(statSync(join(receipts, '..')).mode & 0o777, 0o700);
  const saved = JSON.parse(readFileSync(receipts, 'utf8'));
  assert.equal(saved.receipts.length, 1);
  assert.equal(saved.receipts[0].wallet, WALLET);
  assert.match(saved.receipts[0].receiptToken, /^isr_/);
  assert.ok(
    ![...r.out, ...r.err].some((l) => l.includes(saved.receipts[0].receiptToken)),
    'the token is never printed',
  );
  const row = app.db.prepare('SELECT paid_through_seq AS p FROM entitlements WHERE city = ?').get('nyc') as {
    p: number;
  };
  assert.equal(row.p, 23);

  const json = await run('buy', ['--city', 'nyc', '--count', '2', '--json']);
  assert.equal(json.code, 0);
  const body = JSON.parse(json.out[0]!);
  assert.equal(body.paidThroughSeq, 25);
  assert.equal(body.receiptToken, undefined);
  assert.equal(body.disclaimer, undefined);
  assert.equal(JSON.parse(readFileSync(receipts, 'utf8')).receipts.length, 1, 'one record per (server, wallet, city)');
});

test('read pages through every entitled signal, then reports exhaustion with exit 3', async (t) => {
  const { app, run } = await setup(t);
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '150'])).code, 0);
  insertSignals(app.db, 'nyc', 160);
  const r = await run('read', ['--city', 'nyc']);
  assert.equal(r.code, 0, r.err.join('\n'));
  assert.equal(r.out.length, 150, 'two pages of 100 and 50, never past the ceiling');
  assert.match(
    r.out[0]!,
    /^#1 nyc 2026-07-15 {2}40-41°F -> 42-43°F {2}\(41°F -> 42°F at 15:00Z\) {2}odds 42-43°F 0\.40 {2}https:\/\/polymarket\.com\//,
  );
  assert.match(r.out[149]!, /^#150 /);
  assert.match(r.err.at(-1)!, /150 signal\(s\); entitled through seq 150, latest 160; next --since 150/);

  const tail = await run('read', ['--city', 'nyc', '--since', '148', '--json']);
  assert.deepEqual(
    tail.out.map((l) => JSON.parse(l).seq),
    [149, 150],
  );
  assert.equal(JSON.parse(tail.out[0]!).disclaimer, undefined);

  const done = await run('read', ['--city', 'nyc', '--since', '150']);
  assert.equal(done.code, 3);
  assert.match(
    done.err[0]!,
    /bundle used up: entitled through seq 150, latest is 160\. Buy more with: isocast buy --city nyc --count 20/,
  );
});

test('read --follow --wait 0 polls politely, prints new signals as they come, and stops at the ceiling', async (t) => {
  const { app, run } = await setup(t);
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '3'])).code, 0);
  insertSignals(app.db, 'nyc', 1);
  const waits: number[] = [];
  // Each poll interval, the market moves once more.
  const sleep = async (ms: number) => {
    waits.push(ms);
    insertSignals(app.db, 'nyc', 1);
  };
  const r = await run('read', ['--city', 'nyc', '--follow', '--interval', '45', '--wait', '0'], { sleep });
  assert.equal(r.code, 3, r.err.join('\n'));
  assert.deepEqual(
    r.out.map((l) => l.split(' ')[0]),
    ['#1', '#2', '#3'],
  );
  assert.deepEqual(waits, [45_000, 45_000]);
  assert.match(r.err.at(-1)!, /bundle used up: entitled through seq 3/);
});

test('read --follow long-polls: each signal is printed as soon as it is stored, no sleeping between reads (issue 25.4)', async (t) => {
  const { app, run } = await setup(t);
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '3'])).code, 0);
  const feed = crossings(app.stores.signals, app.deps.catalog.get('nyc')!, app.clock.now());
  const notifier = app.stores.notifier;
  const printedAt: number[] = [];
  const committedAt: number[] = [];
  const lines: string[] = [];
  // The market moves three times while the follower is held by the server; it never sleeps.
  const market = (async () => {
    for (let i = 0; i < 3; i++) {
      for (let n = 0; n < 400 && notifier.waiting() === 0; n++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(notifier.waiting(), 1, `the follower is held by the server (${i})`);
      committedAt.push(performance.now());
      feed.next();
    }
  })();
  const r = await run('read', ['--city', 'nyc', '--follow'], {
    sleep: async () => assert.fail('a long-polling follower does not sleep'),
    stdout: (line) => {
      printedAt.push(performance.now());
      lines.push(line);
    },
  });
  await market;
  assert.equal(r.code, 3, r.err.join('\n'));
  assert.match(
    r.err[0]!,
    /waiting for new nyc signals \(3 left in the bundle, latest seq 0\); the server answers as soon as one is stored/,
  );
  assert.match(r.err.at(-1)!, /bundle used up: entitled through seq 3/);
  assert.equal(printedAt.length, 3);
  t.diagnostic(`commit -> printed: ${printedAt.map((p, i) => (p - committedAt[i]!).toFixed(1)).join(', ')} ms`);
});

test('read --follow --wait 0 stops cleanly when interrupted', async (t) => {
  const { run } = await setup(t);
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '5'])).code, 0);
  const stop = new AbortController();
  const r = await run('read', ['--city', 'nyc', '--follow', '--wait', '0'], {
    signal: stop.signal,
    sleep: async (ms) => {
      assert.equal(ms, 30_000);
      stop.abort();
    },
  });
  assert.equal(r.code, 0);
  assert.deepEqual(r.out, []);
  assert.match(r.err.at(-1)!, /stopped after 0 signal\(s\); resume with --since 0/);
});

test('clear messages for usage mistakes, unknown cities, sanctions, missing receipts and an unreachable server', async (t) => {
  const { run, dir } = await setup(t, { OFAC_EXTRA: WALLET });
  const closed = await closedPort();
  const cases: { args: [CliCommand, string[]]; io?: Partial<CliIo>; code: number; message: RegExp }[] = [
    { args: ['buy', ['--city', 'nyc', '--count', '1']], code: 2, message: /--count must be an integer of at least 2/ },
    {
      args: ['buy', ['--city', 'nyc', '--count', '20']],
      io: { envKey: undefined },
      code: 2,
      message: /a wallet key is needed: --key-file <file> or the ISOCAST_KEY/,
    },
    { args: ['buy', ['--city', 'nyc', '--count', '20', '--bogus']], code: 2, message: /unknown flag: --bogus/ },
    { args: ['buy', ['--city', 'atlantis', '--count', '20']], code: 2, message: /unknown city: atlantis/ },
    {
      args: ['buy', ['--city', 'nyc', '--count', '20']],
      code: 1,
      message: /wallet 0x[0-9a-fA-F]{40} is on a sanctions list; payment refused and nothing was charged/,
    },
    // With the key at hand a missing receipt is recovered, which the sanctioned wallet is refused.
    {
      args: ['read', ['--city', 'nyc']],
      code: 1,
      message: /receipt recovery failed with HTTP 403: wallet is sanctioned/,
    },
    {
      args: ['read', ['--city', 'nyc']],
      io: { envKey: undefined },
      code: 3,
      message:
        /no receipt for http:\/\/127\.0\.0\.1:\d+ in .*receipts\.json\. With your key .* a lost receipt is recovered automatically\. To buy: isocast buy --city nyc --count 20 --server/,
    },
    {
      args: ['buy', ['--city', 'nyc', '--count', '20', '--server', `http://127.0.0.1:${closed}`]],
      code: 1,
      message: /cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); is the server running\?/,
    },
    {
      args: ['buy', ['--city', 'nyc', '--count', '20', '--key-file', join(dir, 'nope')]],
      code: 2,
      message: /cannot read --key-file .*nope: ENOENT/,
    },
  ];
  for (const c of cases) {
    const r = await run(c.args[0], c.args[1], c.io);
    assert.equal(r.code, c.code, `${c.args[1].join(' ')}: ${r.err.join('\n')}`);
    assert.match(r.err.join('\n'), c.message);
  }
  writeFileSync(join(dir, 'bad-key'), 'not a key\n', { mode: 0o600 });
  const bad = await run('buy', ['--city', 'nyc', '--count', '20', '--key-file', join(dir, 'bad-key')]);
  assert.equal(bad.code, 2);
  assert.match(bad.err[0]!, /does not hold a private key/);
  assert.ok(!bad.err.join('').includes('not a key'), 'key file content is never echoed');
});

test('a key file readable by others draws a warning, and the wallet in it is the payer', async (t) => {
  const { app, dir, run } = await setup(t);
  const keyFile = join(dir, 'key.txt');
  writeFileSync(keyFile, `${KEY.slice(2)}\n`, { mode: 0o644 });
  const r = await run('buy', ['--city', 'london', '--count', '2', '--key-file', keyFile], { envKey: undefined });
  assert.equal(r.code, 0, r.err.join('\n'));
  assert.match(r.err[0]!, /readable by other users; chmod 600 it/);
  const row = app.db.prepare('SELECT wallet FROM entitlements WHERE city = ?').get('london') as { wallet: string };
  assert.equal(row.wallet.toLowerCase(), WALLET.toLowerCase());
});

test('against a real instance: the same bundle bought twice in one second moves the ceiling twice, and a lost receipt is recovered by signature', async (t) => {
  const { app, receipts, run } = await setup(t);
  insertSignals(app.db, 'nyc', 3);
  // The clock stands still: both purchases happen in the same second, each with a fresh echoed salt.
  const first = await run('buy', ['--city', 'nyc', '--count', '20', '--yes']);
  const second = await run('buy', ['--city', 'nyc', '--count', '20', '--yes']);
  assert.equal(first.code, 0, first.err.join('\n'));
  assert.equal(second.code, 0, second.err.join('\n'));
  assert.match(first.out[1]!, /^entitled through seq 23 /);
  assert.match(second.out[1]!, /^entitled through seq 43 /);
  const nonces = app.db.prepare(`SELECT nonce FROM payments WHERE status = 'applied'`).pluck().all();
  assert.equal(new Set(nonces).size, 2, 'two on-chain nonces');

  writeFileSync(receipts, JSON.stringify({ version: 1, receipts: [] }), { mode: 0o600 });
  const recovered = await run('receipt', []);
  assert.equal(recovered.code, 0, recovered.err.join('\n'));
  const saved = JSON.parse(readFileSync(receipts, 'utf8'));
  assert.equal(saved.receipts.at(-1).source, 'recovered');
  const read = await run('read', ['--city', 'nyc']);
  assert.equal(read.code, 0, read.err.join('\n'));
  assert.deepEqual(
    read.out.map((l) => l.split(' ')[0]),
    ['#1', '#2', '#3'],
  );
  // One signed request consumed (it can never be used again).
  assert.equal(app.db.prepare('SELECT count(*) FROM receipt_requests').pluck().get(), 1);
});

test('isocast receipt signs for the server it talks to, never re-signs after "signature already used", and --revoke revokes every token', async (t) => {
  const { app, receipts, run } = await setup(t);
  insertSignals(app.db, 'nyc', 3);
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '20', '--yes'])).code, 0);
  const first = await run('receipt', []);
  assert.equal(first.code, 0, first.err.join('\n'));
  // Same second (the clock stands still): the same signature, refused; the CLI stops and says why.
  const again = await run('receipt', []);
  assert.equal(again.code, 1);
  assert.match(again.err.join('\n'), /signature already used.*isocast receipt --revoke/s);
  assert.equal(app.db.prepare('SELECT count(*) FROM receipt_requests').pluck().get(), 1, 'one request, not re-signed');

  const tokens = JSON.parse(readFileSync(receipts, 'utf8')).receipts.map(
    (r: { receiptToken: string }) => r.receiptToken,
  );
  const revoked = await run('receipt', ['--revoke', '--json']);
  assert.equal(revoked.code, 0, revoked.err.join('\n'));
  assert.deepEqual(JSON.parse(revoked.out[0]!).revoked, 2, 'the purchase token and the recovered one');
  assert.equal(JSON.parse(readFileSync(receipts, 'utf8')).receipts.length, 0, 'saved records for the wallet dropped');
  assert.equal(app.db.prepare('SELECT count(*) FROM receipts').pluck().get(), 0);
  for (const token of new Set(tokens)) {
    const res = await app.app.fetch(
      new Request('http://x/v1/signals?city=nyc', { headers: { authorization: `Bearer ${token}` } }),
    );
    assert.equal(res.status, 402);
  }
  // A read a second later recovers a new token with one signature.
  app.clock.advance(1_000);
  const read = await run('read', ['--city', 'nyc']);
  assert.equal(read.code, 0, read.err.join('\n'));
  assert.equal(read.out.length, 3);
});
