import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { runCli } from '../../src/buyer/cli/index.ts';
import { listen, tempDir, testApp } from '../helpers/app.ts';
import { startFakeBotApi } from '../fakes/bot-api.ts';
import { compileCacheEnv } from '../helpers/child-env.ts';

const KEY = `0x${'d4'.repeat(32)}`;
const WALLET = privateKeyToAccount(KEY as `0x${string}`).address.toLowerCase();

async function setup(t: { after(fn: () => unknown): void }) {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  const messenger = createBotMessenger({
    token: bot.token,
    apiUrl: bot.url,
    limits: { globalPerSecond: 1000, chatIntervalMs: 1, groupIntervalMs: 1 },
  });
  const env = testApp(t, { deps: { messenger } });
  const server = await listen(t, env.app.fetch);
  const run = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli('register-chat', ['--server', server, ...args], {
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
      envKey: KEY,
      nowMs: () => env.clock.now(),
    });
    return { code, out, err };
  };
  return { env, bot, server, run };
}

test('register-chat signs the EIP-712 message, the chat gets its test message, and --delete removes it', async (t) => {
  const { env, bot, run } = await setup(t);
  const set = await run(['--chat', '424242', '--city', 'nyc']);
  assert.equal(set.code, 0, set.err.join('\n'));
  assert.equal(set.out[0], `chat 424242 now receives nyc signals entitled to ${WALLET}`);
  assert.equal(bot.messages.length, 1);
  assert.equal(bot.messages[0]!.chatId, '424242');
  const row = env.db
    .prepare('SELECT chat_id AS chat, city FROM delivery_registrations WHERE wallet = ?')
    .get(WALLET) as { chat: string; city: string };
  assert.deepEqual({ ...row }, { chat: '424242', city: 'nyc' });

  const all = await run(['--chat', '424242', '--json']);
  assert.equal(all.code, 0);
  const body = JSON.parse(all.out[0]!);
  assert.deepEqual(
    { ...body, idempotent: undefined },
    { ok: true, wallet: WALLET, chatId: '424242', citySlug: null, action: 'set', idempotent: undefined },
  );

  const del = await run(['--delete']);
  assert.equal(del.code, 0, del.err.join('\n'));
  assert.equal(del.out[0], `delivery registration of ${WALLET} removed (was chat 424242)`);
  // The same signed request again is an idempotent replay; a fresh signature finds nothing.
  env.clock.advance(1_000);
  const again = await run(['--delete']);
  assert.equal(again.code, 1);
  assert.match(again.err[0]!, /nothing to delete: wallet 0x[0-9a-fA-F]{40} has no chat registered at http/);
});

test('register-chat explains a failed test message, an unknown city, a skewed clock and a missing --chat', async (t) => {
  const { env, bot, run } = await setup(t);
  bot.behave('777', { kind: 'blocked' });
  const blocked = await run(['--chat', '777']);
  assert.equal(blocked.code, 1);
  assert.match(blocked.err[0]!, /the test message to chat 777 failed, nothing was stored: test message failed/);
  const unknown = await run(['--chat', '424242', '--city', 'atlantis']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.err[0]!, /unknown city: atlantis/);
  env.clock.advance(3_600_000);
  const out: string[] = [];
  const skewed = await runCli('register-chat', ['--server', await listen(t, env.app.fetch), '--chat', '1'], {
    stdout: () => {},
    stderr: (l) => out.push(l),
    envKey: KEY,
    nowMs: () => env.clock.now() - 3_600_000,
  });
  assert.equal(skewed, 1);
  assert.match(out[0]!, /stale timestamp: check this machine's clock \(600 s tolerance\)/);
  const missing = await run([]);
  assert.equal(missing.code, 2);
  assert.match(missing.err[0]!, /--chat <id> is required/);
});

test('main.ts runs the buyer commands with ISOCAST_KEY from the environment and their exit codes', async (t) => {
  const env = testApp(t);
  const server = await listen(t, env.app.fetch);
  const dir = tempDir(t, 'isocast-main-');
  const node = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'node');
  const main = join(import.meta.dirname, '..', '..', 'src', 'main.ts');
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(node, [main, ...args], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          ...compileCacheEnv(),
          ISOCAST_KEY: KEY,
          XDG_STATE_HOME: join(dir, 'state'),
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b) => {
        stdout += b;
      });
      child.stderr.on('data', (b) => {
        stderr += b;
      });
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  // The manual clock of testApp is fixed in 2026-07; the authorization must be valid at that time, so
  // the real-clock child buys against a live-clock copy of the app instead.
  const live = testApp(t, { nowMs: Date.now() });
  const liveServer = await listen(t, live.app.fetch);
  const bought = await run(['buy', '--city', 'nyc', '--count', '2', '--server', liveServer, '--json']);
  assert.equal(bought.code, 0, bought.stderr);
  assert.equal(JSON.parse(bought.stdout).paidThroughSeq, 2);
  assert.equal(JSON.parse(bought.stdout).receiptsFile, join(dir, 'state', 'isocast', 'receipts.json'));
  assert.equal(statSync(join(dir, 'state', 'isocast')).mode & 0o777, 0o700);
  assert.equal(statSync(join(dir, 'state', 'isocast', 'receipts.json')).mode & 0o777, 0o600);
  const read = await run(['read', '--city', 'nyc', '--server', liveServer]);
  assert.equal(read.code, 0, read.stderr);
  assert.match(read.stderr, /no new signals yet: latest is seq 0, entitled through seq 2/);
  const usage = await run(['buy', '--city', 'nyc', '--server', server]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--count is required/);
});
