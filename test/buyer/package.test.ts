import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { bindingNonce as packageNonce, ChallengeRefused, payFor402 } from '../../packages/isocast-client/src/index.ts';
import { bindingNonce as serverNonce } from '../../src/payments/binding.ts';
import { listen, testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { installClientPackage, PACKAGE_DIR, ROOT } from '../helpers/client-package.ts';

/**
 * The buyer package as another program gets it (issue 28 item 4): `npm pack`, the tarball
 * installed into an empty project, then a plain-JavaScript script there that imports only
 * `@isocast/client` and viem buys a bundle from a running isocast (mock payments, 127.0.0.1),
 * reads the signals with the receipt, recovers a receipt with one signature and revokes it; and
 * a TypeScript file there type-checks against the shipped declarations.
 */
const BUYER = `
import { ChallengeRefused, decodePaymentResponse, payFor402, recoverReceipt, revokeReceipts } from '@isocast/client';
import { signInHeader } from '@isocast/client/siwx';
import { privateKeyToAccount } from 'viem/accounts';

const server = process.env.ISOCAST_SERVER;
const account = privateKeyToAccount(process.env.ISOCAST_KEY);
const { payTo } = await (await fetch(server + '/v1/signals/meta?city=nyc')).json();
const url = server + '/v1/subscribe?city=nyc&count=20';
const challenge = await (await fetch(url, { method: 'POST' })).json();

const inflated = structuredClone(challenge);
inflated.accepts[0].maxAmountRequired = '1000000';
const refused = await payFor402(inflated, account).then(() => 'signed', (e) => e instanceof ChallengeRefused && e.message);

const payment = await payFor402(challenge, account, { expect: { city: 'nyc', count: 20, payTo } });
const paid = await fetch(url, { method: 'POST', headers: { 'X-Payment': payment.xPayment } });
const bought = await paid.json();
const settled = decodePaymentResponse(paid.headers.get('x-payment-response'));
const read = (token) => fetch(server + '/v1/signals?city=nyc&since=0', { headers: { Authorization: 'Bearer ' + token } });
const page = await (await read(bought.receiptToken)).json();

const recovered = await recoverReceipt({ server, account });
const reread = (await read(recovered.receiptToken)).status;
const { revoked } = await revokeReceipts({ server, account });
const afterRevoke = (await read(recovered.receiptToken)).status;
// No token at all: the wallet signs in (sign-in-with-x) on the 402's PAYMENT-REQUIRED.
const readUrl = server + '/v1/signals?city=nyc&since=0';
const declared = (await fetch(readUrl)).headers.get('payment-required');
const signedIn = await fetch(readUrl, { headers: { 'SIGN-IN-WITH-X': await signInHeader(declared, account, readUrl) } });
const signedInSeqs = (await signedIn.json()).signals?.map((s) => s.seq);
console.log(JSON.stringify({ refused, status: paid.status, bought, settled, payer: payment.payer,
  seqs: page.signals.map((s) => s.seq), recovered: recovered.cities, reread, revoked, afterRevoke, signedIn: signedIn.status, signedInSeqs }));
`;

const CONSUMER = `
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { checkChallenge, payFor402, type Payment, recoverReceipt, type RecoveredReceipt } from '@isocast/client';

const account = privateKeyToAccount(generatePrivateKey());
export const paying: Promise<Payment> = payFor402({}, account, { expect: { city: 'nyc', count: 20 } });
export const recovering: Promise<RecoveredReceipt> = recoverReceipt({ server: 'http://127.0.0.1:8402', account });
// @ts-expect-error: a count is a number, and the declarations say so
checkChallenge({ body: {}, accept: {}, binding: { citySlug: 'nyc', count: '20', salt: '0x00' } }, {});
`;

/** Runs a child process without blocking this one (the server under test lives in it). */
function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('npm pack -> install into an empty project -> a plain Node script buys, reads, recovers and revokes', async (t) => {
  const started = Date.now();
  const { project, tarball, npmLog } = installClientPackage(t);
  const installedMs = Date.now() - started;

  // The tarball holds the built package and nothing else: no sources, no tests, no dependencies.
  const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n').sort();
  assert.deepEqual(listing, [
    'package/LICENSE',
    'package/README.md',
    'package/dist/index.d.ts',
    'package/dist/index.js',
    'package/dist/isocast-mcp.js',
    'package/dist/mcp.d.ts',
    'package/dist/mcp.js',
    'package/dist/siwx.d.ts',
    'package/dist/siwx.js',
    'package/package.json',
  ]);
  const manifest = JSON.parse(readFileSync(join(project, 'node_modules/@isocast/client/package.json'), 'utf8'));
  assert.equal(manifest.name, JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')).name);
  assert.equal(manifest.dependencies, undefined, 'a buyer installs viem, nothing else');

  // A real server: the app is built after listen() so BASE_URL is the address the buyer signs for.
  let fetchApp: (req: Request) => Response | Promise<Response> = () => new Response(null, { status: 503 });
  const base = await listen(t, (req) => fetchApp(req));
  const env = testApp(t, { env: { BASE_URL: base }, nowMs: Date.now() });
  insertSignals(env.db, 'nyc', 3);
  fetchApp = env.app.fetch;

  writeFileSync(join(project, 'buyer.mjs'), BUYER);
  writeFileSync(join(project, 'consumer.ts'), CONSUMER);
  const tsconfig = {
    // As a buyer's project would: strict, its own types only (skipLibCheck: viem's are not ours to check).
    compilerOptions: {
      module: 'nodenext',
      target: 'es2022',
      lib: ['es2022', 'dom'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    },
    files: ['consumer.ts'],
  };
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
  const key = generatePrivateKey();
  const [buyer, tsc] = await Promise.all([
    run(process.execPath, ['buyer.mjs'], {
      cwd: project,
      env: { PATH: process.env.PATH, ISOCAST_SERVER: base, ISOCAST_KEY: key },
    }),
    run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], { cwd: project }),
  ]);
  assert.equal(buyer.code, 0, buyer.stderr);
  assert.equal(tsc.code, 0, `the shipped declarations type-check in a consumer:\n${tsc.stdout}${tsc.stderr}`);

  const out = JSON.parse(buyer.stdout);
  assert.match(
    out.refused,
    /maxAmountRequired.*but 20 signals cost 0\.1 USDC/,
    'an inflated challenge is refused unsigned',
  );
  assert.equal(out.status, 200, JSON.stringify(out.bought));
  assert.deepEqual(
    [out.bought.city, out.bought.count, out.bought.paidThroughSeq],
    ['nyc', 20, 23],
    'entitled through the 3 stored signals plus 20',
  );
  assert.equal(out.settled.success, true);
  assert.equal(out.settled.payer.toLowerCase(), out.payer.toLowerCase());
  assert.deepEqual(out.seqs, [1, 2, 3]);
  assert.deepEqual(out.recovered, [{ city: 'nyc', paidThroughSeq: 23 }]);
  assert.equal(out.reread, 200);
  assert.ok(out.revoked >= 1);
  assert.equal(out.afterRevoke, 402, 'a revoked token reads nothing: the answer is a fresh 402');
  assert.deepEqual([out.signedIn, out.signedInSeqs], [200, [1, 2, 3]], 'signed in with @isocast/client/siwx, no token');
  t.diagnostic(
    `${npmLog
      .trim()
      .split('\n')
      .filter((l) => /tgz|added|reused/.test(l))
      .join('; ')} (${installedMs} ms)`,
  );
  t.diagnostic(
    `buyer.mjs (Node ${process.version}, imports @isocast/client and viem only): HTTP ${out.status}, bought ${out.bought.count} ${out.bought.city} through seq ${out.bought.paidThroughSeq}, tx ${out.settled.transaction}; read seqs ${out.seqs.join(',')}; recovered ${JSON.stringify(out.recovered)}; revoked ${out.revoked}, then ${out.afterRevoke}; consumer.ts type-checks`,
  );
});

test("the package's bindingNonce (viem's encodePacked) is the server's written-out one", () => {
  const payers = Array.from({ length: 4 }, () => privateKeyToAccount(generatePrivateKey()).address);
  for (let i = 0; i < 200; i++) {
    const payer = payers[i % 4]!;
    const caseOf = [payer, payer.toLowerCase() as Address][i % 2]!;
    const city = ['nyc', 'sao-paulo', 'zürich', 'a'.repeat(i % 40)][i % 4]!;
    const count = [2, 20, 9_999, 10_000, 2 ** 40, i][i % 6]!;
    const salt = `0x${randomBytes(32).toString('hex')}` as Hex;
    assert.equal(packageNonce({ payer: caseOf, city, count, salt }), serverNonce({ payer: caseOf, city, count, salt }));
  }
});

test('payFor402 reads a challenge field by field (no schema library) and names the first bad one', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const salt = `0x${'11'.repeat(32)}`;
  const good = {
    scheme: 'exact',
    network: 'eip155:8453',
    maxAmountRequired: '100000',
    payTo: '0x000000000000000000000000000000000000dEaD',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2', binding: { citySlug: 'nyc', count: 20, salt } },
  };
  const cases: [unknown, string][] = [
    [null, 'body: expected an object'],
    [{ x402Version: 2, accepts: [good] }, 'x402Version: expected 1, got 2'],
    [{ x402Version: 1, accepts: [] }, 'accepts: expected a non-empty array'],
    [
      { x402Version: 1, accepts: [{ ...good, maxAmountRequired: 100000 }] },
      'accepts.0.maxAmountRequired: expected a string',
    ],
    [
      { x402Version: 1, accepts: [{ ...good, maxTimeoutSeconds: 0 }] },
      'accepts.0.maxTimeoutSeconds: expected a positive integer',
    ],
    [
      {
        x402Version: 1,
        accepts: [{ ...good, extra: { ...good.extra, binding: { ...good.extra.binding, salt: '0x12' } } }],
      },
      'accepts.0.extra.binding.salt: expected 32 bytes of hex',
    ],
    [
      { x402Version: 1, accepts: [good], extra: { binding: { citySlug: 'nyc' } } },
      'extra.binding.count: expected an integer',
    ],
  ];
  for (const [body, problem] of cases) {
    await assert.rejects(payFor402(body, account), (e: unknown) => {
      assert.ok(e instanceof ChallengeRefused);
      assert.equal(e.message, `not an x402 v1 payment challenge (${problem})`);
      return true;
    });
  }
  const paid = await payFor402({ x402Version: 1, accepts: [good] }, account);
  assert.equal(paid.nonce, packageNonce({ payer: account.address, city: 'nyc', count: 20, salt: salt as Hex }));
  const header = JSON.parse(atob(paid.xPayment));
  assert.deepEqual([header.x402Version, header.scheme, header.network], [1, 'exact', 'eip155:8453']);
});
