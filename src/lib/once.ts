/** Built on first use: zod shapes only the documents need cost start-up time at import (docs/performance.md). */
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
