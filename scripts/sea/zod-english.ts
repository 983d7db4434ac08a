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
 *   - zod's Cloudflare Workers check (core/util.js), which reads `navigator`: Node then loads
 *     internal/navigator before the first answer. The binary is never a Worker; it is `false`.
 *   - every other factory the source never names: `import { z } from 'zod'` resolves to a `z`
 *     holding only the names src/ and the buyer package use as `z.<name>` (zodUsedNames), so
 *     esbuild drops the schema kinds, string formats and JSON Schema processors nothing reaches
 *     (zod in the main bundle about 230 -> 140 KB; docs/performance.md, "Issue 39, fifth round").
 *     A name outside that object is a type error in source mode and undefined in the binary, so
 *     test/binary/zod-english.test.ts checks the object against every use.
 */
import { globSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ts from 'typescript';

type EsbuildPlugin = NonNullable<import('tsup').Options['esbuildPlugins']>[number];

/** zod's locales index, the only module that imports the other languages. */
const LOCALES_INDEX = /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/;
const COMPILE = /[\\/]zod[\\/]v4[\\/]core[\\/]compile\.js$/;
const FROM_JSON_SCHEMA = /[\\/]zod[\\/]v4[\\/]classic[\\/]from-json-schema\.js$/;
const CORE_UTIL = /[\\/]zod[\\/]v4[\\/]core[\\/]util\.js$/;
/** zod's check for Cloudflare Workers, whose first read of `navigator` makes Node load internal/navigator. */
const CLOUDFLARE_CHECK = 'typeof navigator !== "undefined" && navigator?.userAgent?.includes("Cloudflare")';

/** zod functions that are not in the binary, as the stand-ins export them. */
export const ZOD_LEFT_OUT: readonly string[] = ['compile', 'withParser', 'compileFn', 'fromJSONSchema'];

const absent = (name: string) =>
  `export function ${name}() { throw new Error("zod's ${name} is not in the isocast binary"); }\n`;

const ROOT = join(import.meta.dirname, '..', '..');
const SOURCES = ['src/**/*.ts', 'packages/isocast-client/src/**/*.ts'];
/** The importers whose `zod` is the used-names `z`: the sources scanned, nothing else. */
const OWN = [join(ROOT, 'src'), join(ROOT, 'packages', 'isocast-client', 'src')].map((d) => `${d}/`);

/**
 * The names the sources read from zod's `z` as values: `z.<name>` as an expression. Type positions
 * (`z.infer<...>`, `: z.ZodType`) are qualified names to TypeScript's parser and need nothing.
 */
export function zodUsedNames(): string[] {
  const used = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'z')
      used.add(node.name.text);
    ts.forEachChild(node, visit);
  };
  for (const file of SOURCES.flatMap((g) => globSync(g, { cwd: ROOT }))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    if (text.includes('z.')) visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest));
  }
  return [...used].sort();
}

/** `z` as the one object of the names used, imported from zod's classic entry so the rest can go. */
function usedZodModule(): string {
  const names = zodUsedNames();
  const entry = join(dirname(createRequire(join(ROOT, 'package.json')).resolve('zod')), 'v4', 'classic', 'external.js');
  const local = (n: string) => `z_${n}`;
  return (
    `import { ${names.map((n) => `${n} as ${local(n)}`).join(', ')} } from ${JSON.stringify(entry)};\n` +
    `export const z = Object.freeze({ ${names.map((n) => `${n}: ${local(n)}`).join(', ')} });\n`
  );
}

export const zodEnglishOnly: EsbuildPlugin = {
  name: 'isocast-zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^zod$/ }, (args) =>
      OWN.some((dir) => args.importer.startsWith(dir)) ? { path: 'zod', namespace: 'isocast-zod-used' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'isocast-zod-used' }, () => ({
      contents: usedZodModule(),
      loader: 'js',
      resolveDir: ROOT,
    }));
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
    // The binary is Node: never a Worker. The check must be there to replace, or the build stops.
    b.onLoad({ filter: CORE_UTIL }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(CLOUDFLARE_CHECK))
        return { errors: [{ text: `zod's Cloudflare check changed in ${args.path}` }] };
      return { contents: text.replace(CLOUDFLARE_CHECK, 'false'), loader: 'js' };
    });
  },
};
