import { z } from 'zod';
import { ApiError } from '../lib/errors.ts';
import { Disclaimer } from '../lib/schemas.ts';

/** Body of POST /v1/delivery/messenger (spec 4.2). */
export const MessengerDeliveryRequest = z
  .object({
    wallet: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    chatId: z
      .string()
      .max(128)
      .regex(/^\S*$/)
      .optional()
      .describe('Chat id: a number such as 123456789 or -1001234567890, or @channelname. Required when action is set.'),
    citySlug: z
      .string()
      .max(64)
      .nullable()
      .optional()
      .describe('City slug; empty or absent means all cities (stored as null)'),
    action: z.enum(['set', 'delete']),
    signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]+$/)
      .describe('EIP-712 signature over MessengerDelivery; must recover to wallet'),
    timestamp: z.number().int().nonnegative().describe('Unix seconds; within 600 s of server time'),
  })
  .meta({ id: 'MessengerDeliveryRequest' });

export type MessengerDeliveryBody = z.infer<typeof MessengerDeliveryRequest>;

export const MessengerDeliveryResult = z
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
  .meta({ id: 'MessengerDeliveryResult' });

const MESSAGES: Record<string, string> = {
  wallet: 'invalid wallet: must be a 0x-prefixed 20-byte hex address',
  action: 'invalid action: must be "set" or "delete"',
  chatId: 'invalid chatId: must be a string without spaces, at most 128 characters',
  citySlug: 'invalid citySlug: must be a string',
  signature: 'invalid signature: must be a 0x-prefixed hex string',
  timestamp: 'invalid timestamp: must be an integer number of unix seconds',
};

/** Validates the body, naming the first problem in the spec's terms (400). */
export function parseDeliveryBody(body: Record<string, unknown>): MessengerDeliveryBody {
  for (const field of ['wallet', 'action', 'signature', 'timestamp'] as const) {
    if (body[field] === undefined || body[field] === null) throw new ApiError(400, `${field} is required`);
  }
  const result = MessengerDeliveryRequest.safeParse(body);
  if (!result.success) {
    const order = ['wallet', 'action', 'chatId', 'citySlug', 'signature', 'timestamp'];
    const fields = result.error.issues.map((i) => String(i.path[0] ?? ''));
    const first = order.find((f) => fields.includes(f));
    throw new ApiError(400, first ? MESSAGES[first]! : 'request body is invalid');
  }
  if (result.data.action === 'set' && !result.data.chatId)
    throw new ApiError(400, 'chatId is required when action is set');
  return result.data;
}
