'use strict';
/**
 * Evaluates a bundle the binary carries as a SEA asset (scripts/sea/asset-bundles.ts) and returns
 * its exports. Each asset's stand-in module calls this once: esbuild evaluates a bundled module
 * once, and every later `import()` of the entry gets that module's exports. The asset requires
 * only Node's built-in modules (the build checks), which the main bundle's own `require` serves.
 */
const { getAsset } = require('node:sea');
const { runInThisContext } = require('node:vm');

exports.evaluateAssetBundle = (name) => {
  const wrapper = runInThisContext(
    `(function (exports, require, module, __filename, __dirname) {${getAsset(name, 'utf8')}\n})`,
    { filename: name },
  );
  const mod = { exports: {} };
  wrapper(mod.exports, require, mod, __filename, __dirname);
  return mod.exports;
};
