import { z } from 'zod';
import { chatIdRequired, invalidField } from '../lib/api-errors.ts';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';
import * as signed from '../lib/signed-request.ts';
import { CHAT_ID_PATTERN, CHAT_ID_RULE, canonicalChatId } from './chat-id.ts';

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

type MessengerDeliveryBody = z.infer<ReturnType<typeof MessengerDeliveryRequest>>;

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
const MESSAGES: Record<string, string> = {
  action: 'invalid action: must be "set" or "delete"',
  chatId: `invalid chatId: must be ${CHAT_ID_RULE}`,
  citySlug: 'invalid citySlug: must be a string',
};
/** The first problem named, in the body's reading order. */
const ORDER = ['wallet', 'action', 'chatId', 'citySlug', 'signature', 'timestamp'];

/**
 * Validates the body, naming the first problem in the spec's terms (400). `chat` is the chat's one
 * canonical spelling (chat-id.ts), what every budget, the pacing and the store key on; null when
 * the body names none.
 */
export function parseDeliveryBody(body: Record<string, unknown>): MessengerDeliveryBody & { chat: string | null } {
  signed.requireFields(body, ['wallet', 'action', 'signature', 'timestamp']);
  const result = MessengerDeliveryRequest().safeParse(body);
  if (!result.success)
    throw signed.invalidSignedBody(result.error, {
      order: ORDER,
      messages: MESSAGES,
      fallback: 'request body is invalid',
    });
  if (result.data.action === 'set' && !result.data.chatId) throw chatIdRequired();
  if (!result.data.chatId) return { ...result.data, chat: null };
  const chat = canonicalChatId(result.data.chatId);
  if (!chat.ok) throw invalidField(chat.error);
  return { ...result.data, chat: chat.chatId };
}
