import { isSingleBinary, readAssetBytes, readAssetText } from '../lib/assets.ts';
import { cacheRoots, loadEmbeddedAddon } from '../lib/native-addon.ts';

/** better-sqlite3's native addon inside the single binary, loaded by src/lib/native-addon.ts. */
export const ADDON_ASSET = 'better_sqlite3.node';
/** The addon's cache key, computed by the build so a start does not hash 2 MB (docs/performance.md). */
export const ADDON_HASH_ASSET = `${ADDON_ASSET}.sha256`;
export { addonHash } from '../lib/native-addon.ts';

function embeddedHash(): string | undefined {
  try {
    const h = readAssetText(ADDON_HASH_ASSET).trim();
    return /^[0-9a-f]{16}$/.test(h) ? h : undefined;
  } catch {
    return undefined;
  }
}

/** The loaded addon and the file it came from: a worker thread must load that same file. */
let loaded: { exports: object; file: string } | undefined;

export function nativeSqliteBinding(env: NodeJS.ProcessEnv = process.env): object | undefined {
  if (!isSingleBinary()) return undefined;
  loaded ??= loadEmbeddedAddon(readAssetBytes(ADDON_ASSET), cacheRoots(env), {
    name: ADDON_ASSET,
    hash: embeddedHash(),
  });
  return loaded.exports;
}

export function nativeSqliteAddonFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return nativeSqliteBinding(env) && loaded?.file;
}
