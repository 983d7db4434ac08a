/**
 * One spelling per chat: budgets, pacing and the registration are keyed by chat id, so two
 * spellings of one chat must never be two keys. A numeric id is taken only in its one decimal
 * spelling (within safe integers, which hold every id the platform issues); any other spelling is
 * refused, not folded, so the id a wallet signed is the id stored. A `@username` is folded to
 * lower case, as the platform treats it. Pure.
 */
type ChatIdResult = { ok: true; chatId: string } | { ok: false; error: string };

export const CHAT_ID_RULE =
  'a chat number in plain decimal such as 123456789 or -1001234567890 (no leading zeros, "+" or spaces), or @username (a letter, then 3 to 31 letters, digits or underscores)';

const NUMBER = /^-?[1-9][0-9]{0,15}$/;
const USERNAME = /^@[A-Za-z][A-Za-z0-9_]{3,31}$/;
/** The spellings canonicalChatId accepts, for the body schema (an empty chatId is absent: `delete` signs it as ""). */
export const CHAT_ID_PATTERN = new RegExp(`^(|${NUMBER.source.slice(1, -1)}|${USERNAME.source.slice(1, -1)})$`);

export function canonicalChatId(raw: string): ChatIdResult {
  if (NUMBER.test(raw) && Number.isSafeInteger(Number(raw))) return { ok: true, chatId: raw };
  if (USERNAME.test(raw)) return { ok: true, chatId: raw.toLowerCase() };
  return { ok: false, error: `invalid chatId: must be ${CHAT_ID_RULE}` };
}

/** Whether a stored (canonical) chat id is numeric: the Bot API takes those as JSON numbers. */
export function isNumericChatId(chatId: string): boolean {
  return NUMBER.test(chatId);
}
