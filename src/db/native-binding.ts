/**
 * better-sqlite3's native addon. From a checkout the package finds it itself (undefined here);
 * inside the single binary scripts/build-binary.ts embeds it as an asset and this module loads it.
 */
export function nativeSqliteBinding(): object | undefined {
  return undefined;
}
