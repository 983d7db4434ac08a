/**
 * Stands in for src/payments/settlers/from-config.ts inside the binary's main bundle
 * (scripts/sea/live-payments.ts): evaluates the second bundle carried as the SEA asset
 * `payments-live.cjs` the first time live mode asks for it, and re-exports what it exports.
 */
import { getAsset } from 'node:sea';
import { runInThisContext } from 'node:vm';
import type * as Live from '../../src/payments/settlers/from-config.ts';

/** LIVE_PAYMENTS_ASSET of scripts/sea/live-payments.ts (not imported: the build's code stays out of the bundle). */
const LIVE_PAYMENTS_ASSET = 'payments-live.cjs';

function evaluate(): typeof Live {
  const source = getAsset(LIVE_PAYMENTS_ASSET, 'utf8');
  const wrapper = runInThisContext(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: LIVE_PAYMENTS_ASSET,
  }) as (exports: object, req: NodeJS.Require, module: { exports: object }, file: string, dir: string) => void;
  const mod = { exports: {} };
  // The bundle requires only Node's built-in modules (the build checks), which this require serves.
  wrapper(mod.exports, require, mod, __filename, __dirname);
  return mod.exports as typeof Live;
}

const live = evaluate();
export const settlerFromConfig: typeof Live.settlerFromConfig = live.settlerFromConfig;
export const chainVerifierFromConfig: typeof Live.chainVerifierFromConfig = live.chainVerifierFromConfig;
