/**
 * Minimum spacing under the Bot API's limits (about 30/s, 1/s per chat, 20/min per group): unlike a token
 * bucket, no full burst at a window edge. Pure. The `test` lane (registration test messages) has its own
 * small rate and waits for chat slots the `paid` lane booked, so it never takes a push's turn.
 */
export type Lane = 'paid' | 'test';

/** Per second overall, ms apart per chat and per group, test messages per second on top; margins absorb jitter. */
export const BOT_API_LIMITS = {
  globalPerSecond: 25,
  chatIntervalMs: 1100,
  groupIntervalMs: 3100,
  testPerSecond: 2,
};

export type SendLimits = Omit<typeof BOT_API_LIMITS, 'testPerSecond'> & { testPerSecond?: number };

/** Groups and channels (negative ids, `@username`) take the group spacing; ids come canonical (one slot per chat). */
function isGroupChat(chatId: string): boolean {
  return chatId.startsWith('-') || chatId.startsWith('@');
}

/** `readyAt` is the earliest instant a message to the chat may leave on the lane; `reserve` books it. */
export function createPacer(limits: SendLimits = BOT_API_LIMITS) {
  const lanes = {
    paid: { gapMs: 1000 / limits.globalPerSecond, next: 0, chats: new Map<string, number>() },
    test: { gapMs: 1000 / Math.max(0.001, limits.testPerSecond ?? 2), next: 0, chats: new Map<string, number>() },
  };
  let pausedUntil = 0;

  const readyAt = (chatId: string, nowMs: number, lane: Lane = 'paid') => {
    const paid = Math.max(nowMs, pausedUntil, lanes.paid.chats.get(chatId) ?? 0, lanes[lane].next);
    return lane === 'paid' ? paid : Math.max(paid, lanes.test.chats.get(chatId) ?? 0);
  };

  const interval = (chatId: string) => (isGroupChat(chatId) ? limits.groupIntervalMs : limits.chatIntervalMs);

  return {
    readyAt,
    reserve: (chatId: string, nowMs: number, lane: Lane = 'paid') => {
      const at = readyAt(chatId, nowMs, lane);
      const l = lanes[lane];
      l.next = at + l.gapMs;
      l.chats.set(chatId, at + interval(chatId));
      // Entries in the past carry no constraint; dropping them bounds the map by recent chats.
      if (l.chats.size >= 10_000) for (const [chat, next] of l.chats) if (next <= nowMs) l.chats.delete(chat);
      return at;
    },
    /** Holds every send until `untilMs` (a 429 answer). */
    pauseUntil: (untilMs: number) => {
      pausedUntil = Math.max(pausedUntil, untilMs);
    },
  };
}
