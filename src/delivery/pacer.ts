/**
 * Send pacing under the Telegram Bot API's limits (about 30/s overall, 1/s per chat, 20/min per
 * group), by minimum spacing: 1/rate keeps every sliding window under the limit, where a token
 * bucket would allow a full burst at a window edge. Pure: every call takes the instant.
 * The `paid` lane sees only paid bookings, so nothing else delays a push; the `test` lane
 * (registration test messages) has its own small rate and also waits for chat slots the paid lane
 * booked, so a test message never takes a push's turn.
 */
export type Lane = 'paid' | 'test';

export type SendLimits = {
  /** Messages per second across all chats. */
  globalPerSecond: number;
  /** Minimum ms between two messages to one private chat. */
  chatIntervalMs: number;
  /** Minimum ms between two messages to one group or channel (chat ids starting with '-' or '@'). */
  groupIntervalMs: number;
  /** Test messages per second across all chats, on top of globalPerSecond. */
  testPerSecond?: number;
};

/** Margins under the platform's limits absorb network jitter between our clock and theirs. */
export const BOT_API_LIMITS: SendLimits = {
  globalPerSecond: 25,
  chatIntervalMs: 1100,
  groupIntervalMs: 3100,
  testPerSecond: 2,
};

type Pacer = {
  /** Earliest instant a message to `chatId` may leave on `lane` (default paid). */
  readyAt(chatId: string, nowMs: number, lane?: Lane): number;
  /** Books the earliest slot for `chatId` on `lane` (default paid) and returns its instant. */
  reserve(chatId: string, nowMs: number, lane?: Lane): number;
  /** Holds every send until `untilMs` (a 429 answer). */
  pauseUntil(untilMs: number): void;
};

/**
 * Groups and channels (negative ids) and public channels named by `@username` take the slower
 * group spacing. Callers pass the canonical id (chat-id.ts), so every spelling of one chat shares
 * one pacing slot.
 */
function isGroupChat(chatId: string): boolean {
  return chatId.startsWith('-') || chatId.startsWith('@');
}

export function createPacer(limits: SendLimits = BOT_API_LIMITS): Pacer {
  const globalGapMs = 1000 / limits.globalPerSecond;
  const testGapMs = 1000 / Math.max(0.001, limits.testPerSecond ?? 2);
  let globalNext = 0;
  let testNext = 0;
  let pausedUntil = 0;
  const chatNext = new Map<string, number>();
  const testChatNext = new Map<string, number>();

  const readyAt = (chatId: string, nowMs: number, lane: Lane = 'paid') => {
    const paid = Math.max(nowMs, pausedUntil, chatNext.get(chatId) ?? 0);
    return lane === 'paid' ? Math.max(paid, globalNext) : Math.max(paid, testNext, testChatNext.get(chatId) ?? 0);
  };

  const sweep = (map: Map<string, number>, nowMs: number) => {
    // Entries in the past carry no constraint; dropping them bounds the map by recent chats.
    if (map.size < 10_000) return;
    for (const [chat, next] of map) if (next <= nowMs) map.delete(chat);
  };
  const interval = (chatId: string) => (isGroupChat(chatId) ? limits.groupIntervalMs : limits.chatIntervalMs);

  return {
    readyAt,
    reserve: (chatId, nowMs, lane = 'paid') => {
      const at = readyAt(chatId, nowMs, lane);
      if (lane === 'paid') {
        globalNext = at + globalGapMs;
        chatNext.set(chatId, at + interval(chatId));
        sweep(chatNext, nowMs);
      } else {
        testNext = at + testGapMs;
        testChatNext.set(chatId, at + interval(chatId));
        sweep(testChatNext, nowMs);
      }
      return at;
    },
    pauseUntil: (untilMs) => {
      pausedUntil = Math.max(pausedUntil, untilMs);
    },
  };
}
