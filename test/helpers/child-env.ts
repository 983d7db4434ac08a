/**
 * What a Node child started with a hand-picked environment still takes from the suite: Node's
 * compile cache directory (scripts/test.ts sets it). It changes no behaviour, only how much CPU
 * each child spends stripping and compiling the TypeScript it loads.
 */
export function compileCacheEnv(): Record<string, string> {
  const dir = process.env.NODE_COMPILE_CACHE;
  return dir ? { NODE_COMPILE_CACHE: dir } : {};
}
