import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  globSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { tempDir } from './app.ts';

/**
 * The buyer package as a buyer gets it: packages/isocast-client is copied to a temp dir (so two
 * test processes never build into one dist/), packed with `npm pack` (its prepack builds the JS
 * and the .d.ts), and the tarball installed with `npm install --offline` into an empty project:
 * the package has no dependencies, so nothing is fetched, and a dependency added by mistake
 * fails here. Its peers (viem; @x402/core, @x402/fetch, @x402/extensions and @modelcontextprotocol/sdk, optional) are this checkout's, linked
 * into the project's node_modules as a buyer's own install would put them there.
 *
 * Building the declarations type-checks viem's types (about 10 s here), so a tarball is kept in
 * the temp dir under the hash of everything it is built from (the package's files and the root
 * lockfile, which pins the build tools): the package test and the examples test build it once.
 */
export const ROOT = join(import.meta.dirname, '..', '..');
export const PACKAGE_DIR = join(ROOT, 'packages', 'isocast-client');
const PEERS = ['viem', '@x402/core', '@x402/fetch', '@x402/extensions', '@modelcontextprotocol/sdk'];

export type InstalledClient = { project: string; tarball: string; npmLog: string };

/** npm's environment without the npm_* settings of an `npm test` run around this one. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('npm_') || k === 'npm_config_cache') env[k] = v;
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
}

/** What the tarball is built from: a change to any of these builds a new one. */
function sourceHash(): string {
  const h = createHash('sha256');
  const files = globSync(['package.json', 'tsconfig.json', 'README.md', 'src/**/*.ts'], { cwd: PACKAGE_DIR }).sort();
  for (const f of files)
    h.update(f)
      .update('\0')
      .update(readFileSync(join(PACKAGE_DIR, f)))
      .update('\0');
  h.update(readFileSync(join(ROOT, 'package-lock.json')));
  return h.digest('hex').slice(0, 16);
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, {
    cwd,
    env: npmEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
}

/** `npm pack` of a copy of the package (its prepack builds dist/); returns the tarball and npm's output. */
export function packClient(t: { after(fn: () => void): void }): { tarball: string; log: string } {
  const cached = join(tmpdir(), `isocast-client-${sourceHash()}.tgz`);
  if (existsSync(cached)) return { tarball: cached, log: `(reused ${cached})\n` };
  const work = tempDir(t, 'isocast-client-pack-');
  const copy = join(work, 'isocast-client');
  cpSync(PACKAGE_DIR, copy, { recursive: true, filter: (src) => !/[\\/](dist|node_modules)$/.test(src) });
  // The build tools (tsup, typescript) and the peers' types come from this checkout.
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(copy, 'node_modules'), 'dir');
  const log = npm(['pack', '--pack-destination', work], copy);
  const packed = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);
  // Same file system, so the rename is atomic: a concurrent test sees a whole tarball or none.
  renameSync(packed, cached);
  return { tarball: cached, log };
}

export function installClientPackage(t: { after(fn: () => void): void }): InstalledClient {
  const { tarball, log } = packClient(t);
  const project = join(tempDir(t, 'isocast-buyer-'), 'buyer');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'buyer', private: true, type: 'module' })}\n`);
  // --legacy-peer-deps: the peers are linked below, not fetched.
  const installLog = npm(['install', tarball, '--offline', '--legacy-peer-deps', '--no-audit', '--no-fund'], project);
  for (const peer of PEERS) {
    const at = join(project, 'node_modules', peer);
    mkdirSync(dirname(at), { recursive: true });
    symlinkSync(realpathSync(join(ROOT, 'node_modules', peer)), at, 'dir');
  }
  return { project, tarball, npmLog: log + installLog };
}
