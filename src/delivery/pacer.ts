/**
 * Send pacing under the bot platform's limits. The Telegram Bot API asks bots to stay under about
 * 30 messages per second overall, about 1 per second to one chat, and 20 per minute to one group.
 * Pacing is by minimum spacing rather than bursts: a spacing of 1/rate keeps every sliding window
 * under the limit, where a token bucket would allow a full burst at a window edge. Pure: every
 * call takes the current instant in epoch ms.
 */
export type SendLimits = {
  /** Messages per second across all chats. */
  globalPerSecond: number;
  /** Minimum ms between two messages to one private chat. */
  chatIntervalMs: number;
  /** Minimum ms between two messages to one group or channel (chat ids starting with '-'). */
  groupIntervalMs: number;
};

/** Margins under the platform's limits absorb network jitter between our clock and theirs. */
export const BOT_API_LIMITS: SendLimits = { globalPerSecond: 25, chatIntervalMs: 1100, groupIntervalMs: 3100 };

export type Pacer = {
  /** Earliest instant a message to `chatId` may leave. */
  readyAt(chatId: string, nowMs: number): number;
  /** Books the earliest slot for `chatId` and returns its instant. */
  reserve(chatId: string, nowMs: number): number;
  /** Holds every send until `untilMs` (a 429 answer). */
  pauseUntil(untilMs: number): void;
};

export function isGroupChat(chatId: string): boolean {
  return chatId.startsWith('-');
}

export function createPacer(limits: SendLimits = BOT_API_LIMITS): Pacer {
  const globalGapMs = 1000 / limits.globalPerSecond;
  let globalNext = 0;
  let pausedUntil = 0;
  const chatNext = new Map<string, number>();

  const readyAt = (chatId: string, nowMs: number) => Math.max(nowMs, globalNext, pausedUntil, chatNext.get(chatId) ?? 0);

  const sweep = (nowMs: number) => {
    // Entries in the past carry no constraint; dropping them bounds the map by recent chats.
    if (chatNext.size < 10_000) return;
    for (const [chat, next] of chatNext) if (next <= nowMs) chatNext.delete(chat);
  };

  return {
    readyAt,
    reserve: (chatId, nowMs) => {
      const at = readyAt(chatId, nowMs);
      globalNext = at + globalGapMs;
      chatNext.set(chatId, at + (isGroupChat(chatId) ? limits.groupIntervalMs : limits.chatIntervalMs));
      sweep(nowMs);
      return at;
    },
    pauseUntil: (untilMs) => { pausedUntil = Math.max(pausedUntil, untilMs); },
  };
}
