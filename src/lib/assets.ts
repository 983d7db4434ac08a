import { readFileSync } from 'node:fs';
import { once } from './once.ts';

/** Run-time project files: from the repo in a checkout, SEA assets of the same names inside the binary. */
export const seaModule = once(() => {
  const m = process.getBuiltinModule('node:sea');
  return m.isSea() ? m : null;
});

export function readAssetText(relPath: string): string {
  return readAssetBytes(relPath).toString('utf8');
}

export function readAssetBytes(relPath: string): Buffer {
  const s = seaModule();
  // In a checkout, relative to the repo root (this file is src/lib/assets.ts).
  return s ? Buffer.from(s.getRawAsset(relPath)) : readFileSync(new URL(`../../${relPath}`, import.meta.url));
}
