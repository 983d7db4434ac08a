/**
 * Builds build/isocast: a Node Single Executable Application (SEA).
 *
 *   1. tsup bundles src/main.ts and every dependency into ONE CommonJS file (SEA runs a single
 *      CJS script whose require() only knows built-in modules).
 *   2. A SEA config lists that bundle plus the assets: better-sqlite3's native addon and the
 *      project files read at run time (ASSET_PATTERNS), each under its repo-relative name.
 *   3. `node --experimental-sea-config` turns it into a blob; postject injects the blob into a
 *      stripped copy of the Node 24 binary from the `node` npm package.
 *
 * Nothing is downloaded: the base binary, the addon and the tools all come from node_modules.
 * Usage: npm run build                            always builds
 *        node scripts/build-binary.ts --if-stale   builds only when an input is newer
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  globSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { isBuiltin } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { ADDON_ASSET, ADDON_HASH_ASSET } from '../src/db/native-binding.ts';
import { addonHash } from '../src/lib/native-addon.ts';
import {
  loadPrebuiltAddon,
  SECP256K1_ADDON_ASSET,
  SECP256K1_WASM_ASSET,
  secp256k1WasmPath,
} from '../src/lib/secp256k1.ts';
import { CHECKPOINT_WORKER_ASSET } from '../src/db/checkpointer.ts';
import { FETCH_CLASSES_INJECT, lazyFetchClasses } from './sea/lazy-fetch-classes.ts';

/** The main bundle's free `performance` (scripts/sea/performance-now.mjs): `now()` without node:perf_hooks. */
const PERFORMANCE_NOW_INJECT = join(import.meta.dirname, 'sea', 'performance-now.mjs');
import { lazyBuiltins } from './sea/lazy-builtins.ts';
import { ASSET_BUNDLES, assetBundles } from './sea/asset-bundles.ts';
import { zodEnglishOnly } from './sea/zod-english.ts';

export const ROOT = join(import.meta.dirname, '..');
export const BUILD_DIR = join(ROOT, 'build');
export const BINARY = join(BUILD_DIR, 'isocast');

/**
 * Files the binary reads at run time through src/lib/assets.ts, as globs relative to the repo
 * root. Add a pattern here when a module starts reading a new project file; patterns that match
 * nothing (public/ before it exists) are fine.
 */
export const ASSET_PATTERNS: readonly string[] = ['schema.sql', 'migrations/*.sql', 'public/**'];

/** Whatever a change in makes the current binary out of date. */
const INPUT_PATTERNS: readonly string[] = [
  'src/**',
  // The buyer package's sources: the service imports its shared definitions (chain, tiers, typed data).
  'packages/isocast-client/src/**',
  'package-lock.json',
  'scripts/build-binary.ts',
  'scripts/sea/**',
  ...ASSET_PATTERNS,
];

/** Asset names shared with scripts/sea/code-cache-loader.cjs. */
const CODE_CACHE_BUNDLE_ASSET = 'isocast.cjs';
const CODE_CACHE_ASSET = 'isocast.cjs.cache';

/** SEA's sentinel; the same constant Node's own docs and postject use. */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

function files(patterns: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of patterns) {
    for (const rel of globSync(p, { cwd: ROOT })) {
      if (statSync(join(ROOT, rel)).isFile()) out.add(rel.split('\\').join('/'));
    }
  }
  return [...out].sort();
}

export function assetFiles(): string[] {
  return files(ASSET_PATTERNS);
}

/** True when build/isocast is missing or any input file was modified after it. */
export function binaryIsStale(): boolean {
  if (!existsSync(BINARY)) return true;
  const built = statSync(BINARY).mtimeMs;
  return files(INPUT_PATTERNS).some((rel) => statSync(join(ROOT, rel)).mtimeMs > built);
}

/** The real Node 24 executable behind node_modules/.bin/node (it may be a symlink chain). */
export function baseNodeBinary(): string {
  const p = join(ROOT, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(p)) throw new Error(`${p} not found: run npm ci (the "node" package supplies the base binary)`);
  return realpathSync(p);
}

/**
 * Where better-sqlite3 would load its addon from, mirroring its lib/binding.js: a locally
 * compiled build/Release first, else the shipped prebuild for this platform (musl-aware).
 */
export function addonPath(): string {
  const pkg = join(ROOT, 'node_modules', 'better-sqlite3');
  const compiled = join(pkg, 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(compiled)) return compiled;
  const musl = process.platform === 'linux' && /\/ld-musl-[^/\s]*\.so/.test(readFileSync('/proc/self/maps', 'latin1'));
  const target = `${musl ? 'linuxmusl' : process.platform}-${process.arch}`;
  const prebuilt = join(pkg, 'prebuilds', `${target}.node`);
  if (!existsSync(prebuilt)) throw new Error(`better-sqlite3 addon not found (looked for ${compiled} and ${prebuilt})`);
  return prebuilt;
}

function hasStrip(): boolean {
  try {
    execFileSync('strip', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

/** Runs a build tool; its chatter (postject's LIEF warnings) is shown only when it fails. */
function run(file: string, args: string[]): void {
  try {
    execFileSync(file, args, { cwd: ROOT, stdio: 'pipe' });
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    process.stderr.write(`${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`);
    throw new Error(`${file} ${args.join(' ')} failed`);
  }
}

/**
 * SEA's require() loads built-in modules only, so a bundle that still requires a package by
 * name would start and then die on the first code path that needs it. Caught here instead.
 */
/**
 * ajv (the MCP SDK's validator, in the cli-commands asset) names its runtime helpers as source
 * text for standalone code generation (`uri.code = 'require("ajv/dist/runtime/uri").default'`);
 * isocast never generates standalone code, so those strings are never run as calls.
 */
const CODEGEN_STRINGS = /^(ajv\/dist\/runtime\/|ajv-formats\/dist\/formats$)/;

function assertLoadable(bundle: string): void {
  const text = readFileSync(bundle, 'utf8');
  const external = new Set<string>();
  for (const m of text.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)) {
    const id = m[1] ?? '';
    if (!isBuiltin(id) && !CODEGEN_STRINGS.test(id)) external.add(id);
  }
  if (external.size > 0) throw new Error(`bundle still requires non-built-in modules: ${[...external].join(', ')}`);
  // esbuild escapes non-ASCII in strings but not in regular expression literals: write those as
  // \u escapes. The code-cache loader reads the bundle as latin1, which is only lossless for ASCII.
  const nonAscii = /[\u0080-\uffff]/.exec(text);
  if (nonAscii)
    throw new Error(
      `bundle ${basename(bundle)} is not ASCII near ${JSON.stringify(text.slice(Math.max(0, nonAscii.index - 40), nonAscii.index + 10))}`,
    );
}

export type SeaOptions = {
  /** The TypeScript/JavaScript entry point, bundled with everything it imports. */
  entry: string;
  /** Where the finished executable goes (written by one atomic rename). */
  output: string;
  /** SEA asset name -> file. */
  assets: Record<string, string>;
  /** V8 code cache in the blob (default true). */
  useCodeCache?: boolean;
  /** Node/V8 options the executable always starts with. */
  execArgv?: readonly string[];
  /**
   * Trains a V8 code cache (scripts/sea/code-cache-loader.cjs): given the loader and the bundle
   * as the binary will carry them, runs a start and returns the cache file V8 wrote. Without it
   * the bundle itself is the SEA main, with Node's compile-time code cache only.
   */
  trainCodeCache?: (t: {
    node: string;
    loader: string;
    bundle: string;
    work: string;
    execArgv: readonly string[];
  }) => Promise<string>;
  /** esbuild plugins for the bundle (the service's module stand-ins). */
  esbuildPlugins?: EsbuildPlugin[];
  /** Files whose exports the bundle's free identifiers of the same names refer to (esbuild inject). */
  inject?: string[];
  /** Further entry points, each bundled alone (no plugins, no inject) and carried as the named asset. */
  extraBundles?: Record<string, string>;
  /** Runs the built executable before it replaces `output`; throws to refuse it. */
  check?: (file: string, cwd: string) => void;
  log?: (line: string) => void;
};

/**
 * The NATS client writes `µ` inside a regular expression literal, which esbuild leaves as it is;
 * escaped here as it is loaded (a \u escape means the same in a string, a regex or a comment).
 */
const asciiSources: EsbuildPlugin = {
  name: 'isocast-ascii-sources',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]@nats-io[\\/].*\.js$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replace(
        /[\u0080-\uffff]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      ),
      loader: 'js',
    }));
  },
};

/**
 * Bundle `entry` into one CJS file, make the SEA blob with `assets`, inject it into a stripped
 * copy of the Node 24 binary. The service binary and the bench's hello-world floor are both
 * built here, so they differ only in what they run.
 */
export async function buildSea(opts: SeaOptions): Promise<string> {
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const node = baseNodeBinary();
  // Per-process work dir: two builds at once (a test and `npm run build`) never share files,
  // and the finished binary lands with one atomic rename.
  const work = join(dirname(opts.output), `.work-${process.pid}-${basename(opts.output)}`);
  const bundle = join(work, 'main.cjs');
  const seaConfig = join(work, 'sea-config.json');
  const blob = join(work, 'sea-prep.blob');
  const partial = join(work, basename(opts.output));
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    // tsup is loaded here so that `--if-stale` checks and importers of the constants above
    // do not pay for esbuild.
    const { build } = await import('tsup');
    const bundleFile = async (
      name: string,
      entry: string,
      plugins: EsbuildPlugin[] | undefined,
      inject: string[] | undefined,
    ): Promise<string> => {
      await build({
        config: false,
        entry: { [name]: entry },
        outDir: work,
        format: ['cjs'],
        outExtension: () => ({ js: '.cjs' }),
        platform: 'node',
        target: 'node24',
        // Everything, dependencies included, goes into the one file: there is no node_modules
        // next to the binary. The addon is never imported statically, so nothing is left out.
        noExternal: [/.*/],
        // tsup would rewrite `node:sea` to `sea`, which does not exist, and isSea() would be false.
        removeNodeProtocol: false,
        // import.meta.url (src/lib/assets.ts) becomes the file URL of __filename.
        shims: true,
        splitting: false,
        sourcemap: false,
        // Whitespace and syntax only: identifiers keep their source names, so stack traces and CPU
        // profiles read without esbuild's keepNames, whose `__name()` (a defineProperty for every
        // function and class a module defines) ran thousands of times before the first answer
        // (docs/performance.md, "Start-up, issue 39 second pass").
        minify: false,
        minifyWhitespace: true,
        minifySyntax: true,
        keepNames: false,
        dts: false,
        clean: false,
        silent: true,
        esbuildPlugins: plugins,
        inject,
      });
      const file = join(work, `${name}.cjs`);
      assertLoadable(file);
      return file;
    };
    await bundleFile('main', opts.entry, opts.esbuildPlugins, opts.inject);
    if (opts.inject?.includes(PERFORMANCE_NOW_INJECT)) {
      const other = /\bperformance\.(?!now\b)[\w$]+/.exec(readFileSync(bundle, 'utf8'));
      if (other)
        throw new Error(`the bundle uses ${other[0]}, which ${basename(PERFORMANCE_NOW_INJECT)} does not have`);
    }
    log(`bundle   ${mib(statSync(bundle).size)} MiB (one CJS file, dependencies included)`);
    const extraAssets: Record<string, string> = {};
    for (const [asset, entry] of Object.entries(opts.extraBundles ?? {})) {
      const file = await bundleFile(asset.replace(/\.cjs$/, ''), entry, [asciiSources], undefined);
      extraAssets[asset] = file;
      log(`bundle   ${mib(statSync(file).size)} MiB ${asset} (an asset, evaluated on first use)`);
    }

    let main = bundle;
    let assets = { ...opts.assets, ...extraAssets };
    if (opts.trainCodeCache) {
      // The loader compiles the bundle itself, so a shebang line would be a syntax error there.
      const source = join(work, CODE_CACHE_BUNDLE_ASSET);
      writeFileSync(source, readFileSync(bundle, 'utf8').replace(/^#!.*/, ''));
      main = join(work, 'loader.cjs');
      copyFileSync(join(ROOT, 'scripts', 'sea', 'code-cache-loader.cjs'), main);
      const cache = await opts.trainCodeCache({
        node,
        loader: main,
        bundle: source,
        work,
        execArgv: opts.execArgv ?? [],
      });
      log(`cache    ${mib(statSync(cache).size)} MiB V8 code cache, trained on a start`);
      assets = { ...assets, [CODE_CACHE_BUNDLE_ASSET]: source, [CODE_CACHE_ASSET]: cache };
    }
    writeFileSync(
      seaConfig,
      JSON.stringify(
        {
          main,
          output: blob,
          disableExperimentalSEAWarning: true,
          // V8 code cache made by this very node binary: the bundle is not compiled at each start.
          useCodeCache: opts.useCodeCache ?? true,
          ...(opts.execArgv ? { execArgv: opts.execArgv } : {}),
          assets,
        },
        null,
        2,
      ),
    );
    run(node, ['--experimental-sea-config', seaConfig]);

    copyFileSync(node, partial);
    chmodSync(partial, 0o755);
    if (hasStrip()) run('strip', [partial]);
    run(node, [
      join(ROOT, 'node_modules', 'postject', 'dist', 'cli.js'),
      partial,
      'NODE_SEA_BLOB',
      blob,
      '--sentinel-fuse',
      SEA_FUSE,
    ]);
    // A broken binary must never replace a working one.
    opts.check?.(partial, work);
    mkdirSync(dirname(opts.output), { recursive: true });
    renameSync(partial, opts.output);
    return opts.output;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

type EsbuildPlugin = NonNullable<import('tsup').Options['esbuildPlugins']>[number];

/**
 * @hono/node-server imports node:http2 for `instanceof` checks only; the binary serves HTTP/1.1,
 * so it gets scripts/sea/http2-unused.ts instead and its start does not load http2 and tls.
 * Every other importer (none today) would still get the real module.
 */
const unusedHttp2: EsbuildPlugin = {
  name: 'isocast-unused-http2',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http2$/ }, (args) =>
      /[\\/]@hono[\\/]node-server[\\/]/.test(args.importer)
        ? { path: join(ROOT, 'scripts', 'sea', 'http2-unused.ts') }
        : undefined,
    );
  },
};

/**
 * The training start for the code cache: the loader runs the bundle under the same Node binary
 * (not as a SEA) in a scratch root laid out as a checkout (the assets, and the addon where
 * better-sqlite3 looks for it beside the bundle), `serve` with mock payments and the sim feed,
 * until GET /health answers 200; the SIGTERM that follows makes V8 write the cache on exit.
 * It stops before the poller's first tick, so the cache holds the start and the first answer.
 */
async function trainStart(
  t: { node: string; loader: string; bundle: string; work: string; execArgv: readonly string[] },
  addon: string,
): Promise<string> {
  const root = join(t.work, 'train');
  const cache = join(t.work, 'isocast.cjs.cache');
  // src/lib/assets.ts reads from two levels above the bundle, better-sqlite3 from ../build/Release.
  const bundle = join(root, 'dist', 'pkg', 'main.cjs');
  mkdirSync(dirname(bundle), { recursive: true });
  mkdirSync(join(root, 'dist', 'build', 'Release'), { recursive: true });
  copyFileSync(t.bundle, bundle);
  symlinkSync(addon, join(root, 'dist', 'build', 'Release', 'better_sqlite3.node'));
  for (const rel of assetFiles()) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    symlinkSync(join(ROOT, rel), join(root, rel));
  }
  const port = await new Promise<number>((resolve, reject) => {
    const s = createNetServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
  });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    HOME: root,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: join(root, 'data'),
    PAYMENT_MODE: 'mock',
    FEED: 'sim',
    // The default level: the info lines a start writes are then compiled into the cache too.
    LOG_LEVEL: 'info',
    ISOCAST_TRAIN_BUNDLE: bundle,
    ISOCAST_TRAIN_CACHE: cache,
  };
  // The binary's own V8 flags: V8 refuses a cache made under other flags.
  const child = spawn(t.node, [...t.execArgv, t.loader, 'serve'], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`training start exited with ${child.exitCode}: ${stderr.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error('training start: no 200 from /health within 60 s');
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
  }
  const code = await exited;
  if (code !== 0 || !existsSync(cache))
    throw new Error(
      `training start stopped with ${code} and ${existsSync(cache) ? 'a' : 'no'} cache: ${stderr.slice(-2000)}`,
    );
  return cache;
}

/**
 * V8 flags the binary always starts with. A 16 MB young generation from the start: module
 * evaluation allocates enough that V8's default 1 MB start took several scavenges before the first
 * answer (start-up -9 ms, docs/performance.md); the space is reserved, its pages used as needed.
 */
export const BINARY_EXEC_ARGV: readonly string[] = ['--min-semi-space-size=16'];

export async function buildBinary(
  log: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  opts: { useCodeCache?: boolean; trainedCodeCache?: boolean; output?: string; execArgv?: readonly string[] } = {},
): Promise<string> {
  const started = Date.now();
  const addon = addonPath();
  // libsecp256k1 as WASM: read from the asset, never from a file beside the binary.
  const assets: Record<string, string> = { [ADDON_ASSET]: addon, [SECP256K1_WASM_ASSET]: secp256k1WasmPath() };
  for (const rel of assetFiles()) assets[rel] = join(ROOT, rel);
  // Its N-API addon too, when a prebuild loads on the build machine (none for linux-arm64: the WASM serves).
  try {
    assets[SECP256K1_ADDON_ASSET] = loadPrebuiltAddon().file;
  } catch {
    log('assets   no secp256k1 prebuild loads here: the binary recovers signatures with the WASM');
  }
  // The addon's cache key, hashed here once rather than at every start of the binary.
  const hashFile = join(BUILD_DIR, `.addon-hash-${process.pid}`);
  mkdirSync(BUILD_DIR, { recursive: true });
  writeFileSync(hashFile, `${addonHash(readFileSync(addon))}\n`);
  assets[ADDON_HASH_ASSET] = hashFile;
  let version = '';
  const output = opts.output ?? BINARY;
  const trained = opts.trainedCodeCache ?? true;
  await buildSea({
    entry: join(ROOT, 'src', 'main.ts'),
    output,
    assets,
    useCodeCache: opts.useCodeCache,
    execArgv: opts.execArgv ?? BINARY_EXEC_ARGV,
    log,
    esbuildPlugins: [unusedHttp2, lazyFetchClasses, assetBundles, lazyBuiltins, zodEnglishOnly],
    extraBundles: {
      // Live-mode payments, the buyer's client and replay, evaluated on first use.
      ...ASSET_BUNDLES,
      // The WAL checkpoint thread's code (src/db/checkpointer.ts starts it from this asset).
      [CHECKPOINT_WORKER_ASSET]: join(ROOT, 'src', 'db', 'checkpoint-worker.ts'),
    },
    inject: [FETCH_CLASSES_INJECT, PERFORMANCE_NOW_INJECT],
    trainCodeCache: trained ? (t) => trainStart(t, addon) : undefined,
    check: (file, cwd) => {
      const r = spawnSync(file, ['--version'], {
        cwd,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', ISOCAST_CODE_CACHE_REPORT: '1' },
      });
      version = r.stdout.trim();
      if (r.status !== 0 || !/^isocast \S+$/.test(version))
        throw new Error(`built binary answered --version with ${JSON.stringify(version)} ${r.stderr}`);
      // V8 drops a cache made by another version or with other flags without a word: refused here.
      if (trained && !r.stderr.includes('code cache accepted'))
        throw new Error(`the binary did not accept its trained code cache: ${r.stderr.trim()}`);
    },
  }).finally(() => rmSync(hashFile, { force: true }));
  log(`assets   ${Object.keys(assets).join(', ')} (addon: ${relative(ROOT, addon)})`);
  log(
    `binary   ${relative(ROOT, output)} ${mib(statSync(output).size)} MiB, ${version}, built in ${((Date.now() - started) / 1000).toFixed(1)} s${hasStrip() ? '' : ' (no strip on PATH: unstripped)'}`,
  );
  return output;
}

if (import.meta.main) {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && !binaryIsStale()) {
    process.stdout.write(`${relative(ROOT, BINARY)} is up to date\n`);
  } else {
    buildBinary().catch((err) => {
      process.stderr.write(`build-binary: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
  }
}
