import { z } from 'zod';
import { chatIdRequired, invalidField } from '../lib/api-errors.ts';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';
import * as signed from '../lib/signed-request.ts';

/**
 * One spelling per chat (docs/delivery.md, Chat ids): budgets, pacing and the registration key on
 * it. Any other number spelling is refused, not folded, so the id a wallet signed is the id stored.
 */
const CHAT_ID_RULE =
  'a chat number in plain decimal such as 123456789 or -1001234567890 (no leading zeros, "+" or spaces), or @username (a letter, then 3 to 31 letters, digits or underscores)';

const NUMBER = /^-?[1-9][0-9]{0,15}$/;
const USERNAME = /^@[A-Za-z][A-Za-z0-9_]{3,31}$/;
/** The two spellings, for the body schema (an empty chatId is absent: `delete` signs it as ""). */
const CHAT_ID_PATTERN = new RegExp(`^(|${NUMBER.source.slice(1, -1)}|${USERNAME.source.slice(1, -1)})$`);

/** Whether a stored (canonical) chat id is numeric: the Bot API takes those as JSON numbers. */
export function isNumericChatId(chatId: string): boolean {
  return NUMBER.test(chatId);
}

/** Body of POST /v1/delivery/messenger (spec 4.2), built on its first request (lib/once.ts). */
export const MessengerDeliveryRequest = once(() =>
  z
    .object({
      wallet: signed.signedWallet(),
      chatId: z
        .string()
        .regex(CHAT_ID_PATTERN)
        .optional()
        .describe(
          `Chat id, required when action is set: ${CHAT_ID_RULE}. A username is stored lower-cased; the signature covers the chatId as sent.`,
        ),
      citySlug: z
        .string()
        .max(64)
        .nullable()
        .optional()
        .describe('City slug; empty or absent means all cities (stored as null)'),
      action: z.enum(['set', 'delete']),
      signature: signed.signedSignature().describe('EIP-712 signature over MessengerDelivery; must recover to wallet'),
      timestamp: signed.signedTimestamp(),
    })
    .meta({ id: 'MessengerDeliveryRequest' }),
);

/** The answer's shape, built on first use (lib/once.ts): only the documents and tests need it. */
export const MessengerDeliveryResult = once(() =>
  z
    .object({
      ok: z.literal(true),
      wallet: z.string().describe('Lowercase wallet address'),
      chatId: z
        .string()
        .nullable()
        .describe('The chat registered, or removed by a delete; null only for a repeated delete that named no chat'),
      citySlug: z.string().nullable().describe('null means all cities'),
      action: z.enum(['set', 'delete']),
      idempotent: z
        .boolean()
        .describe('true when this exact signed request was already applied: nothing was changed now'),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'MessengerDeliveryResult' }),
);

/** The registration's own fields; wallet, signature and timestamp are every signed body's (lib/signed-request.ts). */
const MESSAGES = {
  action: 'invalid action: must be "set" or "delete"',
  chatId: `invalid chatId: must be ${CHAT_ID_RULE}`,
  citySlug: 'invalid citySlug: must be a string',
};

/** Validates the body, naming the first problem in the spec's terms (400); `chat` is the canonical spelling or null. */
export function parseDeliveryBody(body: Record<string, unknown>) {
  signed.requireFields(body, ['wallet', 'action', 'signature', 'timestamp']);
  const result = MessengerDeliveryRequest().safeParse(body);
  if (!result.success)
    throw signed.invalidSignedBody(result.error, {
      order: ['wallet', 'action', 'chatId', 'citySlug', 'signature', 'timestamp'],
      messages: MESSAGES,
      fallback: 'request body is invalid',
    });
  const { chatId } = result.data;
  if (result.data.action === 'set' && !chatId) throw chatIdRequired();
  if (!chatId) return { ...result.data, chat: null };
  // Numbers within safe integers (every id the platform issues); a `@username` lower-cased, as the platform treats it.
  if (NUMBER.test(chatId) && !Number.isSafeInteger(Number(chatId))) throw invalidField(MESSAGES.chatId);
  return { ...result.data, chat: chatId.toLowerCase() };
}
