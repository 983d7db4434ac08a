import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** The OS loads a shared object only from a file: an embedded addon is written to a cache dir named by its hash. */
export function addonHash(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

/** Cache parents, best first: later ones catch a read-only home or a noexec /tmp; /tmp's carries the uid. */
export function cacheRoots(env: NodeJS.ProcessEnv): string[] {
  const roots: string[] = [];
  if (env.XDG_CACHE_HOME?.startsWith('/')) roots.push(join(env.XDG_CACHE_HOME, 'isocast'));
  try {
    // homedir() is $HOME when set: node:os (lazy in the binary) stays unloaded at a start.
    const home = env.HOME || homedir();
    if (home) roots.push(join(home, '.cache', 'isocast'));
  } catch {
    // No home directory (a service user without one): the tmpdir candidate remains.
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  // os.tmpdir() is /tmp unless one of these names another.
  roots.push(join(env.TMPDIR || env.TMP || env.TEMP ? tmpdir() : '/tmp', `isocast-${uid}`));
  return [...new Set(roots)];
}

export function dlopenAddon(file: string): object {
  const mod = { exports: {} as object };
  process.dlopen(mod, file);
  return mod.exports;
}

/** `hash` only names the cache directory; what ensureAddonFile does not trust there is rewritten. */
export function loadEmbeddedAddon(
  bytes: Buffer,
  roots: string[],
  at: { name: string; hash?: string },
): { exports: object; file: string } {
  const problems: string[] = [];
  for (const root of roots) {
    const file = join(root, at.hash ?? addonHash(bytes), at.name);
    try {
      ensureAddonFile(root, file, bytes);
      return { exports: dlopenAddon(file), file };
    } catch (err) {
      problems.push(`${dirname(file)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  throw new Error(`cannot load the embedded addon ${at.name} (${problems.join('; ')})`);
}

/**
 * `file` holding `bytes`, in a directory closed to others (or they could have us load their code). A file only this
 * user or root could have changed is not read back (2 ms of every start), as either could edit the binary.
 */
function ensureAddonFile(root: string, file: string, bytes: Buffer): void {
  const dir = dirname(file);
  const uid = process.getuid?.();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Both levels: whoever owns the parent could swap the hash directory under us.
  for (const d of [root, dir]) {
    const st = lstatSync(d);
    if (!st.isDirectory()) throw new Error(`${d} is not a directory`);
    if (uid !== undefined && st.uid !== uid) throw new Error(`${d} is owned by another user`);
    if ((st.mode & 0o022) !== 0) chmodSync(d, 0o700);
  }
  // The size check catches a copy cut short.
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (st?.isFile() && (uid === undefined || st.uid === uid) && (st.mode & 0o022) === 0 && st.size === bytes.length)
    return;
  // A concurrent start or a crash mid-write never leaves a partial file under the final name.
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(temp, bytes, { mode: 0o500, flag: 'wx' });
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
