import { createHash, timingSafeEqual } from 'node:crypto';

/** Both sides hashed first, so the comparison takes the same time whatever the lengths. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = createHash('sha256').update(m[1]!.trim()).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}
