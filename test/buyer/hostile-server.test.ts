import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { tempDir } from '../helpers/app.ts';
import { runCli } from '../../src/buyer/cli/index.ts';
import { startFakeIsocast, type FakeOptions } from './fake-isocast.ts';

/**
 * `isocast buy` against a hostile isocast: every case must end with exit 1, a message naming the
 * problem (printed without control characters), and not one X-Payment header sent: the client
 * refuses before it signs. The table is printed for the record.
 */
const KEY = `0x${'e5'.repeat(32)}`;
const ESC = '\u001b';
const OTHER = '0x00000000000000000000000000000000000000bb';

type Case = { name: string; fake: FakeOptions; args?: string[]; message: RegExp };

const cases: Case[] = [
  {
    name: 'amount inflated (price says $0.10, maxAmountRequired 5000 USDC)',
    fake: {
      challenge: (b) => {
        b.accepts[0].maxAmountRequired = '5000000000';
      },
    },
    message: /asks for 5000 USDC \(maxAmountRequired\) but 20 signals cost 0\.1 USDC \(Starter tier\)/,
  },
  {
    name: 'price and amount both inflated, consistently',
    fake: {
      challenge: (b) => {
        b.accepts[0].maxAmountRequired = '1000000';
        b.accepts[0].price = '$1.00';
      },
    },
    message: /asks for 1 USDC \(maxAmountRequired\) but 20 signals cost 0\.1 USDC/,
  },
  {
    name: 'price string differs from amount',
    fake: {
      challenge: (b) => {
        b.accepts[0].price = '$0.01';
      },
    },
    message: /price \$0\.01 differs from the \$0\.10 that 20 signals cost/,
  },
  {
    name: 'tier table inflated in meta',
    fake: {
      meta: (b) => {
        b.tiers[1].unitPriceUsd = 0.05;
      },
    },
    message: /price tiers differ from the ones built into this client/,
  },
  {
    name: 'challenge binds a bigger bundle',
    fake: {
      challenge: (b) => {
        b.accepts[0].extra.binding.count = 2000;
        b.extra.binding.count = 2000;
      },
    },
    message: /the challenge binds 2000 signals, not 20/,
  },
  {
    name: 'asset swapped',
    fake: {
      challenge: (b) => {
        b.accepts[0].asset = '0x1111111111111111111111111111111111111111';
      },
    },
    message: /asks for token 0x1111111111111111111111111111111111111111, not USDC on Base/,
  },
  {
    name: 'EIP-712 domain of another token',
    fake: {
      challenge: (b) => {
        b.accepts[0].extra.version = '1';
      },
    },
    message: /EIP-712 domain is USD Coin\/1, not USDC's USD Coin\/2/,
  },
  {
    name: 'another chain',
    fake: {
      challenge: (b) => {
        b.accepts[0].network = 'eip155:1';
      },
    },
    message: /the challenge offers exact on eip155:1, not an exact-scheme payment on Base \(eip155:8453\)/,
  },
  {
    name: 'payTo changed between meta and challenge',
    fake: {
      challenge: (b) => {
        b.accepts[0].payTo = OTHER;
      },
    },
    message: new RegExp(`pays to ${OTHER}, but the server publishes 0x0{38}aa as its settlement wallet`),
  },
  {
    name: 'terminal escapes in the challenge',
    fake: {
      challenge: (b) => {
        b.accepts[0].description = `20 signals${ESC}]0;pwned\u0007${ESC}[2J${ESC}[1A\rbought 20 nyc signals`;
      },
    },
    message: /carries terminal control characters \(in accepts\[0\]\.description\)/,
  },
  {
    name: 'terminal escapes in the 402 error text',
    fake: {
      challenge: (b) => {
        b.error = `${ESC}[2K${ESC}[1Gpayment accepted, nothing to pay`;
      },
    },
    message: /carries terminal control characters \(in error\)/,
  },
  {
    name: 'no settlement wallet published',
    fake: {
      meta: (b) => {
        b.payTo = null;
      },
    },
    message: /the server publishes no settlement wallet \(payTo\)/,
  },
  {
    name: 'cost above --max-usd',
    fake: {},
    args: ['--max-usd', '0.05'],
    message: /20 signals cost 0\.1 USDC, above your --max-usd cap of 0\.05 USDC/,
  },
];

test('a hostile server gets no signature: exit 1, a clear message, no X-Payment sent', async (t) => {
  const rows: string[] = ['| case | exit | message | X-Payment sent |', '|---|---|---|---|'];
  for (const c of cases) {
    const fake = await startFakeIsocast(t, c.fake);
    const dir = tempDir(t, 'isocast-hostile-');
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(
      'buy',
      ['--server', fake.url, '--city', 'nyc', '--count', '20', '--yes', ...(c.args ?? [])],
      {
        stdout: (l) => out.push(l),
        stderr: (l) => err.push(l),
        envKey: KEY,
        stateHome: join(dir, 'state'),
      },
    );
    const text = [...out, ...err].join('\n');
    assert.equal(code, 1, `${c.name}: ${text}`);
    assert.match(text, c.message, c.name);
    assert.match(text, /nothing was signed/, c.name);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
    assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(text), `${c.name}: output carries control characters`);
    assert.equal(fake.xPayments.length, 0, `${c.name}: an X-Payment reached the server`);
    assert.ok(!existsSync(join(dir, 'state', 'isocast', 'receipts.json')), c.name);
    rows.push(
      `| ${c.name} | ${code} | ${err
        .at(-1)!
        .replace(/^isocast buy: /, '')
        .replace(/\|/g, '\\|')} | no |`,
    );
  }
  t.diagnostic(`\n${rows.join('\n')}`);
});
