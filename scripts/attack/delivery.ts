import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PrivateKeyAccount } from 'viem/accounts';
import { deliveryTypedData } from '../../src/delivery/typed-data.ts';
import { startFakeBotApi } from '../../test/fakes/bot-api.ts';
import type { AttackCase, AttackContext } from './types.ts';

/**
 * Chat delivery attacks (issue 23 items 3 and 4): chat id spellings that used to be separate
 * budgets, and a wallet put on the sanctions list while the server runs (SIGHUP). Item 6 (junk on
 * the chain settler) needs an EVM and is measured by test/chain/junk.test.ts instead.
 */
async function setBody(account: PrivateKeyAccount, chatId: string): Promise<string> {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = await account.signTypedData(
    deliveryTypedData({ wallet: account.address, chatId, citySlug: '', action: 'set', timestamp }),
  );
  return JSON.stringify({ wallet: account.address, chatId, citySlug: '', action: 'set', signature, timestamp });
}

async function register(ctx: AttackContext, base: string, account: PrivateKeyAccount, chatId: string) {
  return ctx.http('/v1/delivery/messenger', {
    base,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: await setBody(account, chatId),
  });
}

export const cases: AttackCase[] = [
  {
    name: 'non-canonical chat id spellings are refused before any test message',
    expected: '400 invalid chatId for 0123, +123, " 123", @abc, channel; the plain id reaches the test message',
    fast: true,
    async run(ctx) {
      const statuses: string[] = [];
      let ok = true;
      for (const [i, chat] of ['0123456789', '+123456789', ' 123456789', '@abc', 'channel'].entries()) {
        const a = await register(ctx, ctx.baseUrl, ctx.account(`chat-spelling-${i}`), chat);
        statuses.push(`${JSON.stringify(chat)} ${a.status}`);
        ok &&= a.status === 400 && /^invalid chatId/.test(a.json?.error ?? '');
      }
      // The shared server has no bot: the canonical id passes validation and fails at the test message.
      const plain = await register(ctx, ctx.baseUrl, ctx.account('chat-spelling-plain'), '123456789');
      statuses.push(`"123456789" ${plain.status}`);
      return { observed: statuses.join(', '), ok: ok && plain.status === 502 };
    },
  },
  {
    name: 'spellings of one chat share one test-message budget (7 numeric, 12 @channel cases)',
    expected: 'at most 3 test messages per chat (TEST_MESSAGES_BURST)',
    fast: false,
    async run(ctx) {
      const bot = await startFakeBotApi();
      try {
        const server = await ctx.startServer({
          MESSENGER_BOT_TOKEN: bot.token,
          MESSENGER_API_URL: bot.url,
          RATE_LIMIT_ADDRESS_PER_MIN: '0',
        });
        const numeric = [
          '123456789',
          '0123456789',
          '00123456789',
          '+123456789',
          '000123456789',
          '0000123456789',
          '00000123456789',
        ];
        for (const [i, chat] of numeric.entries())
          for (let k = 0; k < 3; k++) await register(ctx, server.baseUrl, ctx.account(`num-${i}-${k}`), chat);
        const toNumeric = bot.messages.filter(
          (m) => m.body.chat_id === 123456789 || m.chatId.endsWith('123456789'),
        ).length;
        const cases12 = Array.from({ length: 12 }, (_, i) =>
          i === 0
            ? '@CHANNEL_NAME'
            : `@${[...'channel_name'].map((ch, j) => (j === i ? ch.toUpperCase() : ch)).join('')}`,
        );
        const before = bot.messages.length;
        for (const [i, chat] of cases12.entries()) await register(ctx, server.baseUrl, ctx.account(`at-${i}`), chat);
        const toChannel = bot.messages.length - before;
        return {
          observed: `${toNumeric} test messages to 123456789 from 21 requests; ${toChannel} to @channel_name from 12`,
          ok: toNumeric <= 3 && toChannel <= 3,
        };
      } finally {
        await bot.close();
      }
    },
  },
  {
    name: 'a wallet listed by SIGHUP cannot register a chat',
    expected: '200 before the reload, 403 "wallet is sanctioned; payment refused" after it, no test message',
    fast: false,
    async run(ctx) {
      const bot = await startFakeBotApi();
      const dir = mkdtempSync(join(tmpdir(), 'isocast-attack-sdn-'));
      try {
        const list = join(dir, 'sdn.txt');
        writeFileSync(list, '0x00000000000000000000000000000000000000aa\n');
        const server = await ctx.startServer({
          MESSENGER_BOT_TOKEN: bot.token,
          MESSENGER_API_URL: bot.url,
          OFAC_LIST_PATH: list,
        });
        const wallet = ctx.account('sanctioned-chat');
        const first = await register(ctx, server.baseUrl, wallet, '424242');
        writeFileSync(list, `0x00000000000000000000000000000000000000aa\n${wallet.address}\n`);
        process.kill(server.pid, 'SIGHUP');
        await new Promise((r) => setTimeout(r, 300));
        const sent = bot.messages.length;
        const second = await register(ctx, server.baseUrl, wallet, '434343');
        return {
          observed: `${first.status} then ${second.status} ${second.json?.error ?? ''}; test messages after the reload: ${bot.messages.length - sent}`,
          ok:
            first.status === 200 &&
            second.status === 403 &&
            second.json?.error === 'wallet is sanctioned; payment refused' &&
            bot.messages.length === sent,
        };
      } finally {
        await bot.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
];
