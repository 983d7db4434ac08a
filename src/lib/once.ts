/** Built on first use: a zod shape built at import costs every start, needed or not (docs/performance.md). */
export function once<T>(build: () => T): () => T {
  let box: { value: T } | undefined;
  return () => {
    box ??= { value: build() };
    return box.value;
  };
}
