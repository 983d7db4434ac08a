'use strict';
/**
 * The binary's SEA main when it carries a trained V8 code cache (scripts/build-binary.ts).
 *
 * Node's own SEA code cache (`useCodeCache`) is made right after compiling the bundle, before
 * anything ran, so it holds only the top-level code: every function a start calls is compiled
 * again at every start. Here the bundle is an asset compiled through `vm.Script` with a cache
 * that V8 wrote after a training start had answered its first request, so it also holds the
 * functions that start ran (V8 keeps lazily compiled functions in `createCachedData()`).
 *
 * The same file runs the training start under plain node (not a SEA): it reads the bundle
 * from ISOCAST_TRAIN_BUNDLE and writes the cache to ISOCAST_TRAIN_CACHE when the process
 * exits. Both modes wrap the source identically: V8 checks the source (by length) and its own
 * version and flags, and silently compiles lazily when the cache does not fit.
 */
const sea = require('node:sea');
const vm = require('node:vm');

const BUNDLE_ASSET = 'isocast.cjs';
const CACHE_ASSET = 'isocast.cjs.cache';

function compile(source, cachedData) {
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  return new vm.Script(wrapped, { filename: BUNDLE_ASSET, cachedData });
}

let script;
// A SEA's own; in training the bundle's path, where a checkout's layout is (assets, the addon).
let filename = __filename;
if (sea.isSea()) {
  // The build makes the bundle ASCII, so latin1 reads it unchanged: a copy of its bytes into a
  // one-byte string, where UTF-8 decoding validated all 1.6 MB first (about 1.5 ms of the start).
  script = compile(
    Buffer.from(sea.getRawAsset(BUNDLE_ASSET)).toString('latin1'),
    Buffer.from(sea.getRawAsset(CACHE_ASSET)),
  );
  if (process.env.ISOCAST_CODE_CACHE_REPORT === '1')
    process.stderr.write(`code cache ${script.cachedDataRejected ? 'rejected' : 'accepted'}\n`);
} else {
  const fs = require('node:fs');
  const out = process.env.ISOCAST_TRAIN_CACHE;
  filename = process.env.ISOCAST_TRAIN_BUNDLE;
  script = compile(fs.readFileSync(filename, 'latin1'), undefined);
  process.on('exit', () => fs.writeFileSync(out, script.createCachedData()));
}
script.runInThisContext()(module.exports, require, module, filename, require('node:path').dirname(filename));
