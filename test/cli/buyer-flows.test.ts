import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { tempDir } from '../helpers/app.ts';
import type { CliCommand } from '../../src/buyer/cli/help.ts';
import { runCli } from '../../src/buyer/cli/index.ts';
import type { CliIo } from '../../src/buyer/cli/output.ts';
import { startFakeIsocast, type FakeOptions } from '../buyer/fake-isocast.ts';

/**
 * The buyer's flows that depend on the payment-plane contract (salt echo, POST /v1/receipts, the
 * in-doubt 503), against a fake isocast speaking it exactly; and the CLI's own rules (receipts in
 * the state dir, --insecure, the confirmation, read messages).
 */
const KEY = `0x${'f6'.repeat(32)}`;
const WALLET = privateKeyToAccount(KEY as `0x${string}`).address;

async function setup(t: Parameters<typeof tempDir>[0], o: FakeOptions = {}) {
  const fake = await startFakeIsocast(t, o);
  const dir = tempDir(t, 'isocast-flows-');
  const stateHome = join(dir, 'state');
  const receipts = join(stateHome, 'isocast', 'receipts.json');
  const run = async (command: CliCommand, args: string[], io: Partial<CliIo> = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(command, ['--server', fake.url, ...args], {
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
      envKey: KEY,
      stateHome,
      sleep: async () => {},
      ...io,
    });
    return { code, out, err, text: [...out, ...err].join('\n') };
  };
  return { fake, dir, stateHome, receipts, run };
}

test('salt echo round trip: the CLI echoes the served salt and the fake verifies the bound nonce', async (t) => {
  const { fake, receipts, run } = await setup(t, { saltEcho: true });
  const r = await run('buy', ['--city', 'nyc', '--count', '20']);
  assert.equal(r.code, 0, r.text);
  assert.match(r.out[0]!, /^bought 20 nyc signals at 0\.005 USDC each \(0\.1 USDC\)$/);
  assert.equal(fake.xPayments.length, 1);
  const sent = JSON.parse(Buffer.from(fake.xPayments[0]!, 'base64').toString());
  assert.match(sent.payload.salt, /^0x0{63}1$/);
  // Receipts live in the state directory: 0700 dir, 0600 file, keyed by server and wallet.
  assert.equal(statSync(join(receipts, '..')).mode & 0o777, 0o700);
  assert.equal(statSync(receipts).mode & 0o777, 0o600);
  const saved = JSON.parse(readFileSync(receipts, 'utf8')).receipts;
  assert.deepEqual(
    [saved[0].server, saved[0].wallet, saved[0].city, saved[0].source],
    [fake.url, WALLET, 'nyc', 'purchase'],
  );
  assert.match(r.out[2]!, new RegExp(`receipt saved to ${receipts}`));
});

test('an old server without saltEcho gets a plain payload (no payload.salt)', async (t) => {
  const { fake, run } = await setup(t);
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '2'])).code, 0);
  assert.equal(JSON.parse(Buffer.from(fake.xPayments[0]!, 'base64').toString()).payload.salt, undefined);
});

test('in-doubt settlement: the CLI waits and resends the SAME header, never a new signature', async (t) => {
  const waits: number[] = [];
  const { fake, run } = await setup(t, { pendingFirst: 2 });
  const r = await run('buy', ['--city', 'nyc', '--count', '20'], {
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  assert.equal(r.code, 0, r.text);
  assert.equal(fake.xPayments.length, 3);
  assert.equal(new Set(fake.xPayments).size, 1, 'one authorization, sent three times');
  assert.deepEqual(waits, [1000, 1000], 'Retry-After honoured');
  assert.match(
    r.err.join('\n'),
    /settlement pending; resending the same authorization in 1 s \(you will not be charged twice\)/,
  );

  const stuck = await setup(t, { pendingFirst: 100 });
  const s = await stuck.run('buy', ['--city', 'nyc', '--count', '20']);
  assert.equal(s.code, 1);
  assert.match(s.text, /settlement still pending after 7 tries/);
  assert.equal(new Set(stuck.fake.xPayments).size, 1);
  assert.equal(stuck.fake.xPayments.length, 7, 'bounded');
});

test('idempotent: true for a challenge just fetched is "already bought with this authorization", exit 1', async (t) => {
  const { run } = await setup(t, { idempotent: true });
  const r = await run('buy', ['--city', 'nyc', '--count', '20']);
  assert.equal(r.code, 1);
  assert.match(
    r.text,
    /already bought with this authorization: 20 nyc signals were bought from 0x[0-9a-fA-F]{40} moments ago/,
  );
  assert.ok(!/^bought/m.test(r.text), 'never reported as a new purchase');
});

test('a missing receipt is recovered with a signature; isocast receipt does it explicitly', async (t) => {
  const { fake, receipts, run, stateHome } = await setup(t, { receipts: true });
  assert.equal(
    (await run('buy', ['--city', 'nyc', '--count', '20', '--receipts', join(stateHome, 'elsewhere.json')])).code,
    0,
  );
  fake.latest.set('nyc', 3);
  const r = await run('read', ['--city', 'nyc']);
  assert.equal(r.code, 0, r.text);
  assert.match(
    r.err[0]!,
    new RegExp(`recovered the receipt for ${WALLET} from ${fake.url} \\(nyc\\); saved to ${receipts}`),
  );
  assert.deepEqual(
    r.out.map((l) => l.split(' ')[0]),
    ['#1', '#2', '#3'],
  );
  const saved = JSON.parse(readFileSync(receipts, 'utf8')).receipts;
  assert.deepEqual([saved[0].city, saved[0].paidThroughSeq, saved[0].source], ['nyc', 20, 'recovered']);
  assert.ok(!r.text.includes(saved[0].receiptToken), 'the token is never printed');

  // A second later: a new timestamp, a new signature (the CLI never re-signs on its own).
  const explicit = await run('receipt', ['--json'], { nowMs: () => Date.now() + 1_000 });
  assert.equal(explicit.code, 0, explicit.text);
  assert.deepEqual(JSON.parse(explicit.out[0]!).cities, [{ city: 'nyc', paidThroughSeq: 20 }]);
  const nothing = await setup(t, { receipts: true });
  const none = await nothing.run('receipt', []);
  assert.equal(none.code, 3);
  assert.match(none.text, /has no purchases for wallet 0x[0-9a-fA-F]{40}; buy first/);
});

test('read: past the latest is "no new signals yet", only since >= paid_through is "bundle used up"', async (t) => {
  const { fake, run } = await setup(t);
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '20'])).code, 0);
  fake.latest.set('nyc', 5);
  const page = await run('read', ['--city', 'nyc']);
  assert.equal(page.out.length, 5);
  const past = await run('read', ['--city', 'nyc', '--since', '5']);
  assert.equal(past.code, 0);
  assert.match(past.err.at(-1)!, /no new signals yet: latest is seq 5, entitled through seq 20/);
  const ahead = await run('read', ['--city', 'nyc', '--since', '12']);
  assert.equal(ahead.code, 0);
  assert.match(ahead.err.at(-1)!, /no new signals yet/);
  const used = await run('read', ['--city', 'nyc', '--since', '20']);
  assert.equal(used.code, 3);
  assert.match(used.err.at(-1)!, /bundle used up: entitled through seq 20, latest is 5/);
  const other = await run('read', ['--city', 'london']);
  assert.equal(other.code, 3);
  assert.match(other.err.at(-1)!, /this wallet has no bundle for london yet/);
});

test('read --follow says once that it waits and when it polls next, then nothing until a signal arrives', async (t) => {
  const { fake, run } = await setup(t);
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '3'])).code, 0);
  let polls = 0;
  const stop = new AbortController();
  const sleep = async () => {
    polls++;
    if (polls === 4) fake.latest.set('nyc', 1);
    if (polls === 8) stop.abort();
  };
  const r = await run('read', ['--city', 'nyc', '--follow', '--interval', '10', '--wait', '0'], {
    sleep,
    signal: stop.signal,
    nowMs: () => Date.parse('2026-07-15T15:00:00Z'),
  });
  assert.equal(r.code, 0, r.text);
  assert.deepEqual(
    r.out.map((l) => l.split(' ')[0]),
    ['#1'],
  );
  const waiting = r.err.filter((l) => l.startsWith('waiting'));
  assert.equal(waiting.length, 2, 'one waiting line before the signal, one after');
  assert.match(
    waiting[0]!,
    /^waiting for new nyc signals \(3 left in the bundle, latest seq 0\); polling every 10 s, next at 15:00:10Z/,
  );
  assert.equal(r.err.length, 3, r.err.join('\n'));
});

test('no receipt: lists the servers that have receipts; plain http to a remote host needs --insecure; a declined prompt sends nothing', async (t) => {
  const { fake, run, dir } = await setup(t);
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '2'])).code, 0);
  const other = await run('read', ['--city', 'nyc', '--server', 'http://localhost:8402'], { envKey: undefined });
  assert.equal(other.code, 3);
  assert.match(
    other.text,
    new RegExp(
      `no receipt for http://localhost:8402 in .*receipts\\.json\\. Receipts in that file are for: ${fake.url} \\(nyc\\)`,
    ),
  );

  const remote = await run('buy', ['--city', 'nyc', '--count', '2', '--server', 'http://signals.example']);
  assert.equal(remote.code, 2);
  assert.match(remote.text, /refusing plain http to signals\.example: .*pass --insecure/);
  const before = fake.xPayments.length;
  const asked: string[] = [];
  const declined = await run('buy', ['--city', 'nyc', '--count', '2'], {
    confirm: async (q) => {
      asked.push(q);
      return false;
    },
  });
  assert.equal(declined.code, 1);
  assert.match(
    asked[0]!,
    /^Pay 0\.01 USDC to 0x0{38}aa on Base for 2 nyc signals, from 0x[0-9a-fA-F]{40}\? \[y\/N\] $/,
  );
  assert.match(declined.text, /not paid: nothing was signed or sent/);
  assert.equal(fake.xPayments.length, before);
  const yes = await run('buy', ['--city', 'nyc', '--count', '2', '--yes'], {
    confirm: async () => {
      throw new Error('--yes must not ask');
    },
  });
  assert.equal(yes.code, 0, yes.text);
  assert.ok(dir);
});

test('a saved token the server no longer recognises is replaced by a recovered one (with the key at hand)', async (t) => {
  const { fake, receipts, run } = await setup(t, { receipts: true });
  assert.equal((await run('buy', ['--city', 'nyc', '--count', '20'])).code, 0);
  fake.tokens.clear();
  fake.latest.set('nyc', 2);
  const r = await run('read', ['--city', 'nyc']);
  assert.equal(r.code, 0, r.text);
  assert.deepEqual(
    r.out.map((l) => l.split(' ')[0]),
    ['#1', '#2'],
  );
  assert.match(r.err[0]!, /recovered the receipt for 0x[0-9a-fA-F]{40}/);
  assert.equal(JSON.parse(readFileSync(receipts, 'utf8')).receipts[0].source, 'recovered');
  // Without the key there is nothing to recover with: the refusal is reported.
  fake.tokens.clear();
  const nokey = await run('read', ['--city', 'nyc'], { envKey: undefined });
  assert.equal(nokey.code, 3);
  assert.match(nokey.text, /the server did not accept the receipt: receipt token not recognised/);
});
