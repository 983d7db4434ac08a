import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { addonPath } from '../../scripts/build-binary.ts';
import { ADDON_ASSET, nativeSqliteBinding } from '../../src/db/native-binding.ts';
import { addonHash, cacheRoots, loadEmbeddedAddon } from '../../src/lib/native-addon.ts';
import { openDb } from '../../src/db/open.ts';

// The real addon the build embeds, loaded the way the binary loads it.
const addon = readFileSync(addonPath());

function cachedFile(root: string): string {
  const [hash, ...rest] = readdirSync(root);
  assert.equal(rest.length, 0);
  assert.match(hash ?? '', /^[0-9a-f]{16}$/);
  return join(root, hash ?? '', 'better_sqlite3.node');
}

test('from a checkout better-sqlite3 finds its own addon', () => {
  assert.equal(nativeSqliteBinding(), undefined);
});

test('cache roots: XDG_CACHE_HOME first, home next, a per-user tmp dir last', () => {
  const roots = cacheRoots({ XDG_CACHE_HOME: '/x/cache' });
  assert.equal(roots[0], '/x/cache/isocast');
  assert.match(roots.at(-1) ?? '', /isocast-\d+$/);
  // A relative XDG_CACHE_HOME is invalid per the XDG spec and ignored.
  assert.ok(!cacheRoots({ XDG_CACHE_HOME: 'rel' }).some((r) => r.startsWith('rel')));
});

test('the embedded addon is written once, private, and opens a working database', (t) => {
  const dir = tempDir(t);
  const root = join(dir, 'cache');
  const binding = loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET }).exports;
  const file = cachedFile(root);
  assert.deepEqual(readFileSync(file), addon);
  assert.equal(statSync(join(root, readdirSync(root)[0] ?? '')).mode & 0o777, 0o700);
  assert.equal(statSync(file).mode & 0o022, 0);

  const db = openDb(join(dir, 'data', 'isocast.db'), { nativeBinding: binding });
  t.after(() => db.close());
  assert.deepEqual(db.prepare('SELECT 40 + 2 AS n').get(), { n: 42 });

  // A second start reuses the file: no temp files left, same inode.
  const before = statSync(file).ino;
  loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET });
  assert.equal(statSync(file).ino, before);
  assert.deepEqual(readdirSync(join(root, readdirSync(root)[0] ?? '')), ['better_sqlite3.node']);
});

test('a damaged cached copy is replaced, not loaded', (t) => {
  const root = join(tempDir(t), 'cache');
  loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET });
  const file = cachedFile(root);
  // A new inode: truncating the mapped original in place would crash this very process.
  rmSync(file);
  writeFileSync(file, addon.subarray(0, 1000));
  loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET });
  assert.deepEqual(readFileSync(file), addon);
});

test('a cached copy someone else could have written is replaced, not loaded', (t) => {
  const root = join(tempDir(t), 'cache');
  loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET });
  const file = cachedFile(root);
  // The right size, so only the owner and mode checks can refuse it (the bytes are not read back).
  chmodSync(file, 0o666);
  const writable = statSync(file).ino;
  loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET });
  assert.notEqual(statSync(file).ino, writable);
  assert.equal(statSync(file).mode & 0o777, 0o500);
  if (process.getuid?.() !== 0) return; // chown to another user needs root
  chownSync(file, 4242, 4242);
  const foreign = statSync(file).ino;
  loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET });
  assert.notEqual(statSync(file).ino, foreign);
  assert.equal(statSync(file).uid, 0);
  assert.deepEqual(readFileSync(file), addon);
});

test('an unusable cache root falls through to the next one', (t) => {
  const dir = tempDir(t);
  const blocked = join(dir, 'blocked');
  writeFileSync(blocked, 'a file where a directory should be');
  const good = join(dir, 'good');
  loadEmbeddedAddon(addon, [blocked, good], { name: ADDON_ASSET });
  assert.deepEqual(readFileSync(cachedFile(good)), addon);
});

test('a cache directory others can write to is closed before use', (t) => {
  const root = join(tempDir(t), 'cache');
  mkdirSync(root, { mode: 0o777 });
  chmodSync(root, 0o777);
  loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET });
  assert.equal(statSync(root).mode & 0o777, 0o700);
});

test('when no root works the error names every attempt', (t) => {
  const dir = tempDir(t);
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  writeFileSync(a, '');
  writeFileSync(b, '');
  assert.throws(
    () => loadEmbeddedAddon(addon, [a, b], { name: ADDON_ASSET }),
    (err: Error) => err.message.includes(a) && err.message.includes(b),
  );
});

test('the build-time key names the directory; a damaged copy under it is still replaced', (t) => {
  const root = join(tempDir(t), 'cache');
  loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET, hash: addonHash(addon) });
  const file = cachedFile(root);
  assert.equal(file, join(root, addonHash(addon), 'better_sqlite3.node'));
  rmSync(file); // a new inode, as above
  writeFileSync(file, addon.subarray(0, 1000));
  loadEmbeddedAddon(addon, [root], { name: ADDON_ASSET, hash: addonHash(addon) });
  assert.ok(readFileSync(file).equals(addon));
});
