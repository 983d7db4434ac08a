import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { recoverReceipt } from '../../packages/isocast-client/src/index.ts';
import { listen, tempDir, testApp, type TestEnv } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { ROOT } from '../helpers/client-package.ts';
import { startFakeIsocast } from './fake-isocast.ts';
import { compileCacheEnv } from '../helpers/child-env.ts';

/**
 * `isocast mcp` as an agent's host runs it: the MCP SDK's own Client spawns the real command
 * (node src/main.ts mcp) over stdio and calls its tools against a real isocast on 127.0.0.1
 * (mock payments). What a purchase did is checked through the server (its ledger rows and
 * POST /v1/receipts), never taken from the tool's answer. The session is printed for the record.
 */
const NODE = join(ROOT, 'node_modules', '.bin', 'node');

type Session = { client: Client; stderr: () => string; close(): Promise<void> };

async function startMcp(
  t: { after(fn: () => Promise<void> | void): void },
  env: Record<string, string>,
): Promise<Session> {
  const transport = new StdioClientTransport({
    command: NODE,
    args: ['src/main.ts', 'mcp'],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'isocast-test-host', version: '1.0.0' });
  await client.connect(transport);
  const close = () => client.close();
  t.after(close);
  return { client, stderr: () => stderr, close };
}

async function realServer(t: Parameters<typeof testApp>[0]): Promise<{ base: string; env: TestEnv }> {
  // The app is built after listen() so BASE_URL is the origin the wallet signs receipt requests for.
  let fetchApp: (req: Request) => Response | Promise<Response> = () => new Response(null, { status: 503 });
  const base = await listen(t, (req) => fetchApp(req));
  const env = testApp(t, { env: { BASE_URL: base }, nowMs: Date.now() });
  fetchApp = env.app.fetch;
  return { base, env };
}

const text = (r: Record<string, unknown>) => (r.content as { type: string; text: string }[])[0]!.text;

test('isocast mcp over stdio: tools listed, a buy the ledger credits, a read, the daily cap kept across a restart', async (t) => {
  const { base, env } = await realServer(t);
  insertSignals(env.db, 'nyc', 3);
  const key = generatePrivateKey();
  const wallet = privateKeyToAccount(key).address;
  const home = tempDir(t, 'isocast-mcp-');
  const mcpEnv = {
    HOME: home,
    XDG_STATE_HOME: join(home, 'state'),
    ISOCAST_SERVER: base,
    ISOCAST_KEY: key,
    ISOCAST_MAX_USD_PER_DAY: '0.15',
  };
  const transcript: string[] = [];
  const log = (what: string, v: unknown) => transcript.push(`${what} ${JSON.stringify(v)}`);
  const payments = () =>
    env.db.prepare('SELECT count(*) FROM payments WHERE lower(payer) = lower(?)').pluck().get(wallet) as number;

  const first = await startMcp(t, mcpEnv);
  const { tools } = await first.client.listTools();
  log(
    'tools/list ->',
    tools.map((x) => ({ name: x.name, input: x.inputSchema })),
  );
  assert.deepEqual(
    tools.map((x) => x.name),
    ['list_cities', 'get_sample', 'buy_signals', 'read_signals'],
  );
  for (const x of tools) assert.ok(x.outputSchema && x.description, `${x.name} declares its output`);

  const cities = await first.client.callTool({ name: 'list_cities', arguments: {} });
  assert.ok(!cities.isError, text(cities));
  const nyc = (cities.structuredContent as { cities: { slug: string; latestSeq: number }[] }).cities.find(
    (c) => c.slug === 'nyc',
  );
  assert.equal(nyc?.latestSeq, 3);

  const sample = await first.client.callTool({ name: 'get_sample', arguments: { city: 'nyc' } });
  assert.equal((sample.structuredContent as { sample: { seq: number } }).sample.seq, 1);

  const bought = await first.client.callTool({ name: 'buy_signals', arguments: { city: 'nyc', count: 20 } });
  log('buy_signals {city: nyc, count: 20} ->', bought);
  assert.ok(!bought.isError, text(bought));
  assert.equal((bought.structuredContent as { paidThroughSeq: number }).paidThroughSeq, 23);
  assert.equal((bought.structuredContent as any).resolutionMetadata.station, 'KLGA', 'what the market resolves on');
  // The server's word: one applied payment of 0.1 USDC from this wallet, and a ceiling of 23.
  const row = env.db
    .prepare('SELECT city, count, amount_micro, status FROM payments WHERE lower(payer) = lower(?)')
    .all(wallet);
  assert.deepEqual(row, [{ city: 'nyc', count: 20, amount_micro: 100_000, status: 'applied' }]);
  const recovered = await recoverReceipt({ server: base, account: privateKeyToAccount(generatePrivateKey()) }).catch(
    (e: Error) => e.message,
  );
  assert.match(String(recovered), /no purchases|bought nothing|404/, 'another wallet has nothing there');
  assert.deepEqual((await recoverReceipt({ server: base, account: privateKeyToAccount(key) })).cities, [
    { city: 'nyc', paidThroughSeq: 23 },
  ]);

  const read = await first.client.callTool({ name: 'read_signals', arguments: { city: 'nyc', since: 0 } });
  log('read_signals {city: nyc, since: 0} ->', {
    ...read,
    structuredContent: { ...(read.structuredContent as object), signals: '[3 signals]' },
  });
  assert.ok(!read.isError, text(read));
  const page = read.structuredContent as { signals: { seq: number }[]; next_cursor: number; more: boolean };
  assert.deepEqual(
    page.signals.map((s) => s.seq),
    [1, 2, 3],
  );
  assert.deepEqual([page.next_cursor, page.more], [3, false]);
  await first.close();

  // A restarted server remembers today's 0.1: another 0.1 passes the 0.15 cap, refused unsigned.
  const second = await startMcp(t, mcpEnv);
  const refused = await second.client.callTool({ name: 'buy_signals', arguments: { city: 'nyc', count: 20 } });
  log('buy_signals over the cap ->', refused);
  assert.equal(refused.isError, true);
  assert.match(text(refused), /costs 0\.1 USDC; with 0\.1 USDC already paid today .* daily cap of 0\.15 USDC/);
  assert.equal(payments(), 1, 'no payment row for the refused buy');
  // A smaller bundle still fits, and the read after a restart signs in with the wallet (no token held).
  const small = await second.client.callTool({ name: 'buy_signals', arguments: { city: 'nyc', count: 2 } });
  assert.ok(!small.isError, text(small));
  assert.equal((small.structuredContent as { spentTodayUsd: string }).spentTodayUsd, '0.11');
  assert.equal(payments(), 2);
  const bad = await second.client.callTool({ name: 'read_signals', arguments: { city: 'atlantis' } });
  assert.equal(bad.isError, true);
  log('read_signals {city: atlantis} ->', bad);

  const everything = JSON.stringify(transcript) + first.stderr() + second.stderr();
  assert.ok(!everything.toLowerCase().includes(key.slice(2).toLowerCase()), 'the key never appears');
  t.diagnostic(`\n${transcript.join('\n')}\nstderr: ${first.stderr().trim()}`);
});

test('isocast mcp against a hostile server: refused before signing, the server gets no X-Payment', async (t) => {
  const fake = await startFakeIsocast(t, {
    challenge: (b) => {
      b.accepts[0].maxAmountRequired = '5000000000';
    },
  });
  const escapes = await startFakeIsocast(t, {
    challenge: (b) => {
      b.accepts[0].description = '20 signals\u001b]0;pwned\u0007 bought';
    },
  });
  const home = tempDir(t, 'isocast-mcp-hostile-');
  for (const [server, message] of [
    [fake, /asks for 5000 USDC \(maxAmountRequired\) but 20 signals cost 0\.1 USDC.*nothing was signed/],
    [escapes, /terminal control characters .*nothing was signed/],
  ] as const) {
    const s = await startMcp(t, {
      HOME: home,
      XDG_STATE_HOME: join(home, 'state'),
      ISOCAST_SERVER: server.url,
      ISOCAST_KEY: `0x${'e5'.repeat(32)}`,
    });
    const r = await s.client.callTool({ name: 'buy_signals', arguments: { city: 'nyc', count: 20 } });
    assert.equal(r.isError, true);
    assert.match(text(r), message);
    assert.equal(server.xPayments.length, 0, 'no X-Payment reached the server');
    await s.close();
  }
});
