import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { once } from '../lib/once.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import { UpstreamError } from '../lib/errors.ts';
import { httpRequest, retryAfterMs, type HttpResponse } from '../lib/http-client.ts';
import { isNumericChatId } from './schemas.ts';
import { BOT_API_LIMITS, createPacer, type Lane, type SendLimits } from './pacer.ts';

/** The Bot API client. A failure is `retryable` only when the platform surely did not take the message. */
export type Messenger = ReturnType<typeof createBotMessenger>;

type MessengerFailure =
  | 'not_configured' // no bot token
  | 'busy' // pacing slot too far away; nothing was sent
  | 'cancelled' // the caller withdrew it before it left (cancelIf); nothing was sent, not to be retried
  | 'unreachable' // connection never made; nothing was sent
  | 'rate_limited' // 429 with retry_after
  | 'server_error' // explicit 5xx answer
  | 'rejected' // explicit 4xx answer: chat not found, bot blocked, bad token...
  | 'ambiguous'; // timeout or broken answer after the request left: it may have been delivered

export class MessengerError extends Error {
  readonly kind: MessengerFailure;
  readonly retryable: boolean;
  readonly retryAfterMs: number | null;

  constructor(kind: MessengerFailure, message: string, retryAfterMs: number | null = null) {
    super(message);
    this.name = 'MessengerError';
    this.kind = kind;
    this.retryable = kind === 'busy' || kind === 'unreachable' || kind === 'rate_limited' || kind === 'server_error';
    this.retryAfterMs = retryAfterMs;
  }
}

/** The Bot API's answer, built at the first send (lib/once.ts). */
const BotAnswer = once(() =>
  z.union([
    z.object({ ok: z.literal(true), result: z.unknown() }),
    z.object({
      ok: z.literal(false),
      error_code: z.number().int().optional(),
      description: z.string().optional(),
      parameters: z.object({ retry_after: z.number().nonnegative().optional() }).loose().optional(),
    }),
  ]),
);

/** Socket errors raised before any request byte reached the platform. */
const NEVER_SENT = new Set(
  'ECONNREFUSED ENOTFOUND EAI_AGAIN EHOSTUNREACH ENETUNREACH UND_ERR_CONNECT_TIMEOUT'.split(' '),
);

function causeCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (
    let e: unknown = err, depth = 0;
    e && typeof e === 'object' && depth < 6;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    // An AggregateError (happy-eyeballs over several addresses) carries one error per attempt.
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) for (const inner of errors) codes.push(...causeCodes(inner));
  }
  return codes;
}

export function createBotMessenger(opts: {
  token?: string;
  apiUrl: string;
  /** Per request; under the 10 s shutdown grace so a stop never waits on a hung send. */
  timeoutMs?: number;
  limits?: SendLimits;
  clock?: Clock;
}) {
  const { token, apiUrl, clock = systemClock, timeoutMs = 7_000 } = opts;
  const pacer = createPacer(opts.limits ?? BOT_API_LIMITS);
  // Descriptions come from the network; the token must not ride along into a log line.
  const scrub = (s: string) => (token ? s.split(token).join('[redacted]') : s);

  const interpret = (res: HttpResponse): void => {
    const parsed = BotAnswer().safeParse(res.json);
    if (res.status >= 200 && res.status < 300 && parsed.success && parsed.data.ok) return;
    if (!parsed.success && res.status >= 200 && res.status < 300) {
      throw new MessengerError('ambiguous', `bot API answered HTTP ${res.status} without a readable result`);
    }
    const failed = parsed.success && !parsed.data.ok ? parsed.data : null;
    const code = failed?.error_code ?? res.status;
    const description = scrub(failed?.description ?? `HTTP ${res.status}`);
    if (code === 429 || res.status === 429) {
      const fromBody = failed?.parameters?.retry_after;
      const waitMs = fromBody !== undefined ? Math.ceil(fromBody * 1000) : (retryAfterMs(res.headers) ?? 1000);
      pacer.pauseUntil(clock.now() + waitMs);
      throw new MessengerError('rate_limited', description, waitMs);
    }
    throw new MessengerError(res.status >= 500 ? 'server_error' : 'rejected', description);
  };

  return {
    configured: Boolean(token),
    /** Milliseconds until a message to the chat could leave without waiting on pacing; 0 if now. */
    waitMs: (chatId: string) => {
      const now = clock.now();
      return pacer.readyAt(chatId, now) - now;
    },
    /** Waits for the pacing slot unless further than `maxWaitMs`; `cancelIf`, asked as the request is about to
     * leave, withdraws it with nothing sent (a wallet listed while it waited). */
    async send(
      chatId: string,
      text: string,
      sendOpts: { maxWaitMs?: number; lane?: Lane; cancelIf?: () => string | null } = {},
    ): Promise<void> {
      if (!token) throw new MessengerError('not_configured', 'messenger bot is not configured');
      const now = clock.now();
      const lane = sendOpts.lane ?? 'paid';
      const wait = pacer.readyAt(chatId, now, lane) - now;
      if (sendOpts.maxWaitMs !== undefined && wait > sendOpts.maxWaitMs)
        throw new MessengerError('busy', `chat is rate limited for another ${Math.ceil(wait / 1000)} s`, wait);
      const slot = pacer.reserve(chatId, now, lane);
      if (slot > now) await sleep(slot - now);
      const cancelled = sendOpts.cancelIf?.() ?? null;
      if (cancelled !== null) throw new MessengerError('cancelled', cancelled);
      let res: HttpResponse;
      try {
        res = await httpRequest({
          upstream: 'messenger',
          url: `${apiUrl}/bot${token}/sendMessage`,
          method: 'POST',
          // Numeric ids go as numbers, as the Bot API documents them; @channel names stay strings.
          body: {
            chat_id: isNumericChatId(chatId) ? Number(chatId) : chatId,
            text,
            link_preview_options: { is_disabled: true },
          },
          timeoutMs,
        });
      } catch (err) {
        const message = scrub(err instanceof Error ? err.message : String(err));
        if (err instanceof UpstreamError && causeCodes(err).some((c) => NEVER_SENT.has(c))) {
          throw new MessengerError('unreachable', message);
        }
        throw new MessengerError('ambiguous', message);
      }
      interpret(res);
    },
  };
}
