import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSingleBinary, readAssetBytes, readAssetText } from '../lib/assets.ts';

/**
 * better-sqlite3's native addon inside the single binary: the OS loads a shared object only from
 * a file, so the embedded asset is written once to a cache directory named after its hash.
 */
export const ADDON_ASSET = 'better_sqlite3.node';
/** The addon's cache key, computed by the build so a start does not hash 2 MB (docs/performance.md). */
export const ADDON_HASH_ASSET = `${ADDON_ASSET}.sha256`;

export function addonHash(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

function embeddedHash(): string | undefined {
  try {
    const h = readAssetText(ADDON_HASH_ASSET).trim();
    return /^[0-9a-f]{16}$/.test(h) ? h : undefined;
  } catch {
    return undefined;
  }
}

let loaded: object | undefined;
/** The file each loaded addon came from: a worker thread must load that same file. */
const addonFiles = new WeakMap<object, string>();

export function nativeSqliteBinding(env: NodeJS.ProcessEnv = process.env): object | undefined {
  if (!isSingleBinary()) return undefined;
  loaded ??= loadEmbeddedAddon(readAssetBytes(ADDON_ASSET), cacheRoots(env), embeddedHash());
  return loaded;
}

export function nativeSqliteAddonFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const addon = nativeSqliteBinding(env);
  return addon ? addonFiles.get(addon) : undefined;
}

/** Cache parents, best first: later ones catch a read-only home or a noexec /tmp; /tmp's carries the uid. */
export function cacheRoots(env: NodeJS.ProcessEnv): string[] {
  const roots: string[] = [];
  if (env.XDG_CACHE_HOME?.startsWith('/')) roots.push(join(env.XDG_CACHE_HOME, 'isocast'));
  try {
    const home = homedir();
    if (home) roots.push(join(home, '.cache', 'isocast'));
  } catch {
    // No home directory (a service user without one): the tmpdir candidate remains.
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  roots.push(join(tmpdir(), `isocast-${uid}`));
  return [...new Set(roots)];
}

/**
 * `hash` only names the cache directory; the file there is still compared byte for byte with
 * `bytes` before it is loaded, so a wrong key can cost a rewrite but never load other code.
 */
export function loadEmbeddedAddon(bytes: Buffer, roots: string[], hash = addonHash(bytes)): object {
  const problems: string[] = [];
  for (const root of roots) {
    const dir = join(root, hash);
    try {
      const file = ensureAddonFile(root, dir, bytes);
      const mod = { exports: {} as object };
      process.dlopen(mod, file);
      addonFiles.set(mod.exports, file);
      return mod.exports;
    } catch (err) {
      problems.push(`${dir}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  throw new Error(`cannot load the embedded SQLite addon (${problems.join('; ')})`);
}

/** A file holding exactly `bytes`, in a directory closed to others (or they could have us load their code). */
function ensureAddonFile(root: string, dir: string, bytes: Buffer): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Both levels: whoever owns the parent could swap the hash directory under us.
  for (const d of [root, dir]) {
    const st = lstatSync(d);
    if (!st.isDirectory()) throw new Error(`${d} is not a directory`);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid())
      throw new Error(`${d} is owned by another user`);
    if ((st.mode & 0o022) !== 0) chmodSync(d, 0o700);
  }
  const file = join(dir, ADDON_ASSET);
  try {
    if (readFileSync(file).equals(bytes)) return file;
  } catch {
    // Not there yet: written below.
  }
  // A concurrent start or a crash mid-write never leaves a partial file under the final name.
  const temp = join(dir, `.${ADDON_ASSET}.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(temp, bytes, { mode: 0o500, flag: 'wx' });
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  return file;
}
