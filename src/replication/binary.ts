import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

/**
 * Where the litestream executable is. The single binary cannot carry it (Litestream is a Go
 * program of its own), so the operator installs it (docs/operations.md, Durability): the upstream
 * release package, or npm's `@flydotio/litestream`. Looked up in this order: LITESTREAM_BIN; a
 * `litestream` next to the running executable (the single binary in /usr/local/bin); PATH; in a
 * checkout, the platform package under node_modules (the npm wrapper in node_modules/.bin is a
 * Node script that would sit between us and Litestream, so the real binary is preferred).
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

export function findLitestream(opts: {
  configured?: string;
  execPath?: string;
  pathEnv?: string;
  cwd?: string;
  platform?: string;
  arch?: string;
}): BinaryLookup {
  if (opts.configured) {
    return executable(opts.configured)
      ? { path: opts.configured }
      : { problem: `LITESTREAM_BIN=${opts.configured} is not an executable file` };
  }
  const candidates: string[] = [];
  const execPath = opts.execPath ?? process.execPath;
  candidates.push(join(dirname(execPath), 'litestream'));
  for (const dir of (opts.pathEnv ?? process.env.PATH ?? '').split(delimiter)) {
    // The npm wrapper script: skipped for the real binary below.
    if (dir && !dir.endsWith(join('node_modules', '.bin'))) candidates.push(join(dir, 'litestream'));
  }
  const pkg = `litestream-${opts.platform ?? process.platform}-${opts.arch ?? process.arch}`;
  candidates.push(join(opts.cwd ?? process.cwd(), 'node_modules', '@flydotio', pkg, 'litestream'));
  for (const c of candidates) if (executable(c)) return { path: c };
  return {
    problem:
      'REPLICA_URL is set but no litestream executable was found (LITESTREAM_BIN, next to isocast, PATH): install Litestream 0.3.x (docs/operations.md, Durability)',
  };
}
