import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether an `Authorization: Bearer <token>` header carries the operator's token (ADMIN_TOKEN, for
 * /metrics and /admin). Both sides are hashed first so the comparison takes the same time whatever
 * the lengths, and `timingSafeEqual` never sees buffers of different sizes.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = createHash('sha256').update(m[1]!.trim()).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}
