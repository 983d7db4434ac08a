/** Built only by api-errors.ts. `code` is for metrics and logs, off the body: spec 7 lists each body's fields. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(opts: {
    code: string;
    status: number;
    message: string;
    extra?: Record<string, unknown>;
    headers?: Record<string, string>;
  }) {
    super(opts.message);
    this.name = 'ApiError';
    this.code = opts.code;
    this.status = opts.status;
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
  }
}

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
