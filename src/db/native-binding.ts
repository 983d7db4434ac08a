import { readAssetBytes, readAssetText, seaModule } from '../lib/assets.ts';
import { cacheRoots, loadEmbeddedAddon } from '../lib/native-addon.ts';

/** better-sqlite3's native addon inside the single binary, loaded by src/lib/native-addon.ts. */
export const ADDON_ASSET = 'better_sqlite3.node';
/** The addon's cache key, computed by the build so a start does not hash 2 MB (docs/performance.md). */
export const ADDON_HASH_ASSET = `${ADDON_ASSET}.sha256`;

/** The loaded addon and the file it came from: a worker thread must load that same file. */
let loaded: { exports: object; file: string } | undefined;

export function nativeSqliteBinding(): object | undefined {
  if (!seaModule()) return undefined;
  loaded ??= loadEmbeddedAddon(readAssetBytes(ADDON_ASSET), cacheRoots(process.env), {
    name: ADDON_ASSET,
    hash: readAssetText(ADDON_HASH_ASSET).trim(),
  });
  return loaded.exports;
}

export function nativeSqliteAddonFile(): string | undefined {
  return nativeSqliteBinding() && loaded?.file;
}
