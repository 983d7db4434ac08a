/**
 * zod 4 inside the binary's main bundle, without the parts isocast never calls. `import { z }`
 * keeps zod's whole namespace, so esbuild cannot drop an unused export; each part below is
 * replaced at load time instead, and V8 no longer carries its functions in the start's code cache
 * (the cache holds an entry for every function the bundle's top level declares, run or not):
 *
 *   - `locales`: English alone. zod evaluates only the English locale (`config(en())` in its
 *     classic entry) and isocast never switches language; the other 44 were about 0.37 MB of
 *     source (main bundle 1.2 -> 0.9 MiB, 2.5-12 ms less CPU a start in three alternating
 *     series; docs/performance.md, "Start-up, issue 39 second pass"). Messages are unchanged.
 *   - `z.compile` (core/compile.js, 47 KB) and `z.fromJSONSchema` (classic/from-json-schema.js,
 *     18 KB): nothing in src/ calls them (test/binary/zod-english.test.ts checks); in the binary
 *     they throw (docs/performance.md, "Issue 39, fourth round: start-up").
 */
import { dirname } from 'node:path';

type EsbuildPlugin = NonNullable<import('tsup').Options['esbuildPlugins']>[number];

/** zod's locales index, the only module that imports the other languages. */
const LOCALES_INDEX = /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/;
const COMPILE = /[\\/]zod[\\/]v4[\\/]core[\\/]compile\.js$/;
const FROM_JSON_SCHEMA = /[\\/]zod[\\/]v4[\\/]classic[\\/]from-json-schema\.js$/;

/** zod functions that are not in the binary, as the stand-ins export them. */
export const ZOD_LEFT_OUT: readonly string[] = ['compile', 'withParser', 'compileFn', 'fromJSONSchema'];

const absent = (name: string) =>
  `export function ${name}() { throw new Error("zod's ${name} is not in the isocast binary"); }\n`;

export const zodEnglishOnly: EsbuildPlugin = {
  name: 'isocast-zod-english-only',
  setup(b) {
    b.onLoad({ filter: LOCALES_INDEX }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
    // The names core/index.js re-exports stay defined: the marker symbol and the error classes.
    b.onLoad({ filter: COMPILE }, () => ({
      contents:
        'export const INVALID = Symbol.for("zod.compile.invalid");\n' +
        'export class ZodCompileAsyncError extends Error {}\nexport class ZodCompileUnsupportedError extends Error {}\n' +
        ['compile', 'withParser', 'compileFn'].map(absent).join(''),
      loader: 'js',
    }));
    b.onLoad({ filter: FROM_JSON_SCHEMA }, () => ({ contents: absent('fromJSONSchema'), loader: 'js' }));
  },
};
