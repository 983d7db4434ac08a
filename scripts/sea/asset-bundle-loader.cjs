'use strict';
/**
 * Evaluates a bundle the binary carries as a SEA asset (scripts/sea/asset-bundles.ts) and returns
 * its exports; each asset at most once. The asset requires only Node's built-in modules (the
 * build checks), which the main bundle's own `require` serves.
 */
const { getAsset } = require('node:sea');
const { runInThisContext } = require('node:vm');

const evaluated = new Map();

exports.evaluateAssetBundle = (name) => {
  let exported = evaluated.get(name);
  if (exported) return exported;
  const wrapper = runInThisContext(
    `(function (exports, require, module, __filename, __dirname) {${getAsset(name, 'utf8')}\n})`,
    { filename: name },
  );
  const mod = { exports: {} };
  wrapper(mod.exports, require, mod, __filename, __dirname);
  exported = mod.exports;
  evaluated.set(name, exported);
  return exported;
};
