import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** Run-time project files: from the repo in a checkout, SEA assets of the same names inside the binary. */
type SeaModule = typeof import('node:sea');

let sea: SeaModule | null | undefined;
export function seaModule(): SeaModule | null {
  if (sea === undefined) {
    try {
      const m = process.getBuiltinModule('node:sea');
      sea = m.isSea() ? m : null;
    } catch {
      sea = null;
    }
  }
  return sea;
}

export function isSingleBinary(): boolean {
  return seaModule() !== null;
}

export function repoRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

export function readAssetText(relPath: string): string {
  return readAssetBytes(relPath).toString('utf8');
}

export function readAssetBytes(relPath: string): Buffer {
  const s = seaModule();
  if (s) return Buffer.from(s.getRawAsset(relPath));
  return readFileSync(join(repoRoot(), relPath));
}
