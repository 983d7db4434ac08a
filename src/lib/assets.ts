import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { once } from './once.ts';

/** Run-time project files: from the repo in a checkout, SEA assets of the same names inside the binary. */
export const seaModule = once(() => {
  const m = process.getBuiltinModule('node:sea');
  return m.isSea() ? m : null;
});

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
