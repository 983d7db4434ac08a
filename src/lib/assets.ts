import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/**
 * Project files the service reads at run time (schema.sql, migrations, the docs page assets).
 * From a checkout they are read from the repo; inside the single binary they are SEA assets
 * under the same relative names, so callers never know which.
 */
type SeaModule = {
  isSea(): boolean;
  getAsset(key: string, encoding: string): string;
  getRawAsset(key: string): ArrayBuffer;
};

let sea: SeaModule | null | undefined;
export function seaModule(): SeaModule | null {
  if (sea === undefined) {
    try {
      const m = process.getBuiltinModule('node:sea') as SeaModule;
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

/** Repo root when running from source (src/lib/assets.ts -> ../..). */
export function repoRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

export function readAssetText(relPath: string): string {
  const s = seaModule();
  if (s) return s.getAsset(relPath, 'utf8');
  return readFileSync(join(repoRoot(), relPath), 'utf8');
}

export function readAssetBytes(relPath: string): Buffer {
  const s = seaModule();
  if (s) return Buffer.from(s.getRawAsset(relPath));
  return readFileSync(join(repoRoot(), relPath));
}
