import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';

/**
 * Where the litestream executable is. The single binary does not carry it (docs/decisions.md:
 * Litestream alone is 29 MiB, a quarter of our binary's 112 MiB again, for a feature most instances
 * leave off), so the operator installs it (docs/operations.md, Durability): the upstream release,
 * or `npm install -g @flydotio/litestream`. That package's `litestream` command is a Node
 * wrapper that runs the real binary with spawnSync: a SIGTERM to it never reaches Litestream (no
 * final sync, an orphan replicating a file a restore may replace), so a wrapper found anywhere is
 * replaced by the binary of its platform package: nested under the wrapper's package (npm 7+
 * global installs, `@flydotio/litestream/node_modules/@flydotio/litestream-linux-x64/litestream`)
 * or beside it (hoisted: `@flydotio/litestream-linux-x64/litestream`).
 *
 * Looked up in this order, with file-system checks only (nothing is spawned; it runs once, at
 * start, and only when REPLICA_URL is set): LITESTREAM_BIN; a `litestream` next to the running
 * executable (the single binary in /usr/local/bin); each PATH entry; npm's global package
 * directory, `<prefix>/lib/node_modules`, for the prefix npm reports to scripts
 * (npm_config_global_prefix, npm_config_prefix, NPM_CONFIG_PREFIX), the running executable's and
 * each PATH entry's parent (a prefix's `bin` is the one on PATH: /usr/local, /usr, ~/.npm-global,
 * an nvm version's directory); in a checkout, ./node_modules.
 */
export type BinaryLookup = { path: string } | { problem: string };

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The real binary of the `@flydotio/litestream` package at `pkgDir`, in either npm layout. */
function packageBinary(pkgDir: string, platformPkg: string): string | null {
  for (const c of [
    join(pkgDir, 'node_modules', '@flydotio', platformPkg, 'litestream'),
    join(dirname(pkgDir), platformPkg, 'litestream'),
  ])
    if (executable(c)) return c;
  return null;
}

/** `path` itself, or the binary behind it when it is (a link to) the npm wrapper; null if neither runs. */
function resolveCommand(path: string, platformPkg: string): string | null {
  if (!executable(path)) return null;
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return null;
  }
  const pkgDir = dirname(real);
  const isWrapper = basename(pkgDir) === 'litestream' && basename(dirname(pkgDir)) === '@flydotio';
  return isWrapper ? packageBinary(pkgDir, platformPkg) : path;
}

export type LitestreamSearch = {
  configured?: string | undefined;
  execPath?: string;
  pathEnv?: string;
  /** The process environment, read for npm's prefix variables. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  platform?: string;
  arch?: string;
};

export function findLitestream(opts: LitestreamSearch): BinaryLookup {
  if (opts.configured) {
    return executable(opts.configured)
      ? { path: opts.configured }
      : { problem: `LITESTREAM_BIN=${opts.configured} is not an executable file` };
  }
  const platformPkg = `litestream-${opts.platform ?? process.platform}-${opts.arch ?? process.arch}`;
  const env = opts.env ?? process.env;
  const execPath = opts.execPath ?? process.execPath;
  const pathDirs = (opts.pathEnv ?? env.PATH ?? '').split(delimiter).filter(Boolean);

  for (const c of [join(dirname(execPath), 'litestream'), ...pathDirs.map((d) => join(d, 'litestream'))]) {
    const found = resolveCommand(c, platformPkg);
    if (found) return { path: found };
  }
  const prefixes = [
    env.npm_config_global_prefix,
    env.npm_config_prefix,
    env.NPM_CONFIG_PREFIX,
    dirname(dirname(execPath)),
    ...pathDirs.map((d) => dirname(d)),
  ];
  const roots = prefixes.filter((p): p is string => !!p).map((p) => join(p, 'lib', 'node_modules'));
  roots.push(join(opts.cwd ?? process.cwd(), 'node_modules'));
  for (const root of new Set(roots)) {
    const found = packageBinary(join(root, '@flydotio', 'litestream'), platformPkg);
    if (found) return { path: found };
  }
  return {
    problem:
      'REPLICA_URL is set but no litestream executable was found (LITESTREAM_BIN, next to isocast, PATH, npm global packages): install Litestream 0.3.x, e.g. npm install -g @flydotio/litestream (docs/operations.md, Durability)',
  };
}
