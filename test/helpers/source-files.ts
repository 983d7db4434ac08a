import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Repo-relative paths of the `.ts` files under `dir`, for the tests that read the tree's own source. */
export function tsFilesUnder(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...tsFilesUnder(root, rel));
    else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}
