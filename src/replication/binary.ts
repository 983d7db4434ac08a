import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import type { ReplicationInput } from './settings.ts';

/** npm's litestream is a Node wrapper that never passes our SIGTERM on: its platform binary is used instead. */
type BinaryLookup = { path: string } | { problem: string };

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

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

export const replicationSettings = (c: ReplicationInput): ReplicationInput | null => (c.REPLICA_URL ? c : null);

export const litestreamBinary = (c: ReplicationInput): BinaryLookup => findLitestream({ configured: c.LITESTREAM_BIN });

export function findLitestream(opts: {
  configured?: string | undefined;
  execPath?: string;
  pathEnv?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  platform?: string;
  arch?: string;
}): BinaryLookup {
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
