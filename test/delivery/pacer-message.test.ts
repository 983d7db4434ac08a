import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BOT_API_LIMITS, createPacer } from '../../src/delivery/pacer.ts';
import { formatSignalMessage, registrationTestMessage } from '../../src/delivery/message.ts';
import { backoffMs } from '../../src/lib/backoff.ts';
import { disclaimerText } from '../../src/terms/terms.ts';
import { signalFixture } from './fixtures.ts';

const LICENCE_LINE = 'Licensed for your own use only; resale and redistribution are not permitted.';
/** Telegram's limit on one message's text. */
const MAX_MESSAGE_CHARS = 4096;

const TERMS = 'https://isocast.example/terms.txt';

test('pacing keeps every one-second window under the platform limits', () => {
  const pacer = createPacer(BOT_API_LIMITS);
  const chats = ['1', '2', '3', '-100500', ...Array.from({ length: 60 }, (_, i) => String(1000 + i))];
  const sent: { chat: string; at: number }[] = [];
  let now = 0;
  // Demand far above the limits: every chat wants a message every 10 ms for 5 s.
  while (now < 5_000) {
    for (const chat of chats) {
      if (pacer.readyAt(chat, now) <= now) sent.push({ chat, at: pacer.reserve(chat, now) });
    }
    now += 10;
  }
  for (const { at } of sent) {
    const inWindow = sent.filter((s) => s.at >= at && s.at < at + 1000);
    assert.ok(inWindow.length <= 25, `global ${inWindow.length} in a second`);
    const perChat = new Map<string, number>();
    for (const s of inWindow) perChat.set(s.chat, (perChat.get(s.chat) ?? 0) + 1);
    for (const [chat, n] of perChat) assert.ok(n <= 1, `chat ${chat}: ${n} in a second`);
    const group = sent.filter((s) => s.chat === '-100500' && s.at >= at && s.at < at + 60_000).length;
    assert.ok(group <= 20);
  }
  assert.ok(sent.length >= 24 * 4, `throughput too low: ${sent.length}`);
});

test('reserve books the earliest slot, groups wait longer, a pause holds everyone', () => {
  const pacer = createPacer({ globalPerSecond: 10, chatIntervalMs: 1000, groupIntervalMs: 3000 });
  assert.equal(pacer.reserve('7', 0), 0);
  assert.equal(pacer.readyAt('8', 0), 100, 'global spacing');
  assert.equal(pacer.readyAt('7', 0), 1000, 'per-chat spacing');
  assert.equal(pacer.reserve('-9', 500), 500);
  assert.equal(pacer.readyAt('-9', 600), 3500);
  pacer.pauseUntil(10_000);
  assert.equal(pacer.readyAt('42', 5_000), 10_000);
  pacer.pauseUntil(2_000);
  assert.equal(pacer.readyAt('42', 5_000), 10_000, 'a shorter pause never shortens a longer one');
});

test('backoff doubles per attempt and is capped', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 10].map((a) => backoffMs(a, 2_000, 20_000)),
    [2_000, 4_000, 8_000, 16_000, 20_000],
  );
});

test('a signal message names city and day, old -> new, live odds, collapsed dead buckets, link, disclaimer and licence', () => {
  const text = formatSignalMessage(signalFixture({ seq: 3 }), { termsUrl: TERMS });
  assert.match(text, /New York City, market day 2026-07-15/);
  assert.match(text, /signal #3/);
  assert.match(text, /Daily high 83°F -> 84°F/);
  assert.match(text, /Bucket 82-83°F -> 84-85°F/);
  assert.match(text, /> 84-85°F {2}41%/, 'the entered bucket is marked');
  assert.match(text, /86-87°F {2}35%/);
  assert.match(text, /88°F or higher {2}24%/);
  assert.match(text, /2 dead buckets \(below the high, no longer reachable\): 80-81°F, 82-83°F/);
  assert.doesNotMatch(text, /80-81°F {2}/, 'dead buckets get no odds line');
  assert.match(text, /at 15:02:07 UTC/);
  assert.ok(text.includes('Market: https://polymarket.com/event/highest-temperature-in-nyc-on-july-15-2026'));
  assert.ok(text.includes(disclaimerText(TERMS)));
  assert.ok(text.endsWith(LICENCE_LINE));
});

test('a signal without odds still reads, and an enormous market is cut to the platform limit keeping the notices', () => {
  const none = formatSignalMessage(signalFixture({ buckets: null, bucketsAsOf: null }), { termsUrl: TERMS });
  assert.match(none, /Odds: not available/);
  const many = Array.from({ length: 400 }, (_, i) => ({
    label: `${i}-${i + 1}°F (a rather long label to fill the text)`,
    conditionId: '0x01',
    yes: 0.5,
    no: 0.5,
    midpoint: 0.5,
  }));
  const big = formatSignalMessage(signalFixture({ buckets: many }), { termsUrl: TERMS });
  assert.ok(big.length <= MAX_MESSAGE_CHARS);
  assert.ok(big.endsWith(LICENCE_LINE));
  assert.match(big, /more buckets on the market page/);
});

test('the registration test message names the scope and charges nothing', () => {
  const all = registrationTestMessage({
    wallet: '0x1111111111111111111111111111111111112222',
    city: null,
    termsUrl: TERMS,
  });
  assert.match(all, /0x1111\.\.\.2222/);
  assert.match(all, /for every city/);
  assert.match(all, /charges nothing/);
  const one = registrationTestMessage({
    wallet: '0x1111111111111111111111111111111111112222',
    city: 'London',
    termsUrl: TERMS,
  });
  assert.match(one, /for London/);
  assert.ok(one.endsWith(LICENCE_LINE));
});
