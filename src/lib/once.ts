/**
 * A value built on first use and kept. Used for zod schemas only the documents need (the
 * OpenAPI and discovery shapes, the operator page's data): building them at import cost every
 * start time before its first answer (docs/performance.md, start-up).
 */
export function once<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}
