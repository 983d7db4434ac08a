/** Built on first use: zod shapes only the documents need cost start-up time at import (docs/performance.md). */
export function once<T>(build: () => T): () => T {
  let box: { value: T } | undefined;
  return () => {
    box ??= { value: build() };
    return box.value;
  };
}
