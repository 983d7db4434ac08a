/**
 * Code the binary carries as bundles of their own (SEA assets), evaluated the first time the
 * main bundle's dynamic `import()` of their entry runs, never at start:
 *
 *   - `payments-live.cjs` (src/payments/settlers/from-config.ts): the live settlers and viem's
 *     RPC client, which only a live-mode `serve` asks for (src/payments/backends.ts); its module
 *     evaluation was about a tenth of the start's CPU;
 *   - `cli-commands.cjs` (src/cli-commands.ts): the buyer's client and replay, which `serve` never
 *     runs; viem's signing and the replay parsers were about 5 ms of every start
 *     (docs/performance.md, start-up);
 *   - `siwx-verify.cjs` (src/payments/siwx-verify.ts): `@x402/extensions`' SIGN-IN-WITH-X parser
 *     and verifier (SIWE's ABNF parser, tweetnacl, two copies of zod 3), evaluated at the first
 *     sign-in; a quarter of the main bundle before (docs/performance.md, start-up).
 *   - `nats.cjs` (src/cluster/nats-modules.ts): the NATS, JetStream and KV clients, which only
 *     a `serve` with NATS_URL asks for (read nodes, docs/operations.md "Scaling out").
 *
 * A dynamic `import()` alone cannot do this in the one CJS bundle: esbuild turns the imported
 * graph into lazy wrappers, and a module shared with the code used at start (viem's index) is
 * then evaluated whole at every start. So the main bundle's `import()` of an entry resolves to a
 * stand-in that evaluates the asset built from the same entry (scripts/sea/asset-bundle-loader.cjs).
 * Each asset has its own copy of what it imports and shares no module state with the main bundle:
 * an entry takes everything through arguments and returns plain data, and no class crosses the
 * boundary to be tested with `instanceof`.
 */
import { join } from 'node:path';

type EsbuildPlugin = NonNullable<import('tsup').Options['esbuildPlugins']>[number];

const SRC = join(import.meta.dirname, '..', '..', 'src');
const LOADER = join(import.meta.dirname, 'asset-bundle-loader.cjs');
const NAMESPACE = 'isocast-asset-bundle';

/** SEA asset name -> the entry bundled into it. */
export const ASSET_BUNDLES: Readonly<Record<string, string>> = {
  'payments-live.cjs': join(SRC, 'payments', 'settlers', 'from-config.ts'),
  'cli-commands.cjs': join(SRC, 'cli-commands.ts'),
  'siwx-verify.cjs': join(SRC, 'payments', 'siwx-verify.ts'),
  'nats.cjs': join(SRC, 'cluster', 'nats-modules.ts'),
};

export const assetBundles: EsbuildPlugin = {
  name: 'isocast-asset-bundles',
  setup(b) {
    const byEntry = new Map(Object.entries(ASSET_BUNDLES).map(([asset, entry]) => [entry, asset]));
    b.onResolve({ filter: /\.ts$/ }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const asset = byEntry.get(join(args.resolveDir, args.path));
      return asset ? { path: asset, namespace: NAMESPACE } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(LOADER)}).evaluateAssetBundle(${JSON.stringify(args.path)});\n`,
      loader: 'js',
      resolveDir: import.meta.dirname,
    }));
  },
};
