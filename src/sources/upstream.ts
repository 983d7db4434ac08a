import type { z } from 'zod';
import { UpstreamError } from '../lib/errors.ts';
import { retryAfterMs, type HttpResponse } from '../lib/http-client.ts';

/** An upstream answer read against its schema; a mismatch names its first problem (`malformed books: 0.bids: ...`). */
export function parseUpstream<S extends z.ZodType>(schema: S, raw: unknown, where: { upstream: string; what: string }) {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data as z.output<S>;
  const issue = parsed.error.issues[0]!;
  throw new UpstreamError(where.upstream, `malformed ${where.what}: ${issue.path.join('.')}: ${issue.message}`);
}

export const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** A non-2xx answer as the UpstreamError the backoff reads (status, and Retry-After when sent). */
export function requireOk(upstream: string, res: HttpResponse): void {
  if (res.status < 200 || res.status > 299)
    throw new UpstreamError(upstream, `HTTP ${res.status}`, {
      httpStatus: res.status,
      retryAfterMs: retryAfterMs(res.headers),
    });
}
