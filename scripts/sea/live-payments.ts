/**
 * Live-mode payments (src/payments/settlers/from-config.ts: the facilitator and chain settlers,
 * viem's RPC client) as a second bundle inside the binary, evaluated only when a live-mode
 * `serve` first asks for them (src/payments/backends.ts). Mock mode, the quick start, never
 * evaluates it: viem's client and its public actions were about a tenth of the start's CPU.
 *
 * A dynamic `import()` alone cannot do this in the one CJS bundle: esbuild turns the imported
 * graph into lazy wrappers, and viem's index, shared with the payment code used at start, is then
 * evaluated whole at every start (docs/performance.md). So the main bundle's import of that
 * module resolves to scripts/sea/live-payments-asset.ts, which evaluates the asset built from
 * the same entry with its own copy of what it imports; it shares no module state with the main
 * bundle (the settlers take everything through arguments and return plain objects).
 */
import { join } from 'node:path';

type EsbuildPlugin = NonNullable<import('tsup').Options['esbuildPlugins']>[number];

/** The asset's name; scripts/sea/live-payments-asset.ts reads it under the same name. */
export const LIVE_PAYMENTS_ASSET = 'payments-live.cjs';
export const LIVE_PAYMENTS_ENTRY = join(
  import.meta.dirname,
  '..',
  '..',
  'src',
  'payments',
  'settlers',
  'from-config.ts',
);
const LOADER = join(import.meta.dirname, 'live-payments-asset.ts');

export const livePaymentsAsset: EsbuildPlugin = {
  name: 'isocast-live-payments-asset',
  setup(b) {
    b.onResolve({ filter: /[\\/]settlers[\\/]from-config\.ts$/ }, (args) =>
      args.kind === 'dynamic-import' && join(args.resolveDir, args.path) === LIVE_PAYMENTS_ENTRY
        ? { path: LOADER }
        : undefined,
    );
  },
};
