/**
 * zod 4's `locales` namespace inside the binary's main bundle holds English alone. zod evaluates
 * only the English locale (`config(en())` in its classic entry) and isocast never switches
 * language, but `export * as locales` kept all of them in the bundle: about 0.37 MB of source,
 * whose functions, though never run, V8 still carried in the start's code cache. Without them
 * the main bundle went from 1.2 to 0.9 MiB and its trained cache from 1.0 to 0.9 MiB, and a
 * start used 2.5-12 ms less CPU in three alternating series (docs/performance.md, "Start-up,
 * issue 39 second pass"). Messages are unchanged: the English locale is the one zod configures itself.
 */
import { dirname } from 'node:path';

type EsbuildPlugin = NonNullable<import('tsup').Options['esbuildPlugins']>[number];

/** zod's locales index, the only module that imports the other languages. */
const LOCALES_INDEX = /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/;

export const zodEnglishOnly: EsbuildPlugin = {
  name: 'isocast-zod-english-only',
  setup(b) {
    b.onLoad({ filter: LOCALES_INDEX }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};
