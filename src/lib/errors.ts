/**
 * The one error type routes throw. `app.onError` turns it into `{error, ...extra, disclaimer}`
 * with `status`; anything else becomes a 500 that never leaks a stack.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.extra = extra;
    this.headers = headers;
  }
}

/** An upstream (market, weather, facilitator, bot) failed or answered garbage. */
export class UpstreamError extends Error {
  readonly upstream: string;
  readonly httpStatus: number | null;
  readonly retryAfterMs: number | null;

  constructor(
    upstream: string,
    message: string,
    opts: { httpStatus?: number | null; retryAfterMs?: number | null; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'UpstreamError';
    this.upstream = upstream;
    this.httpStatus = opts.httpStatus ?? null;
    this.retryAfterMs = opts.retryAfterMs ?? null;
  }
}
