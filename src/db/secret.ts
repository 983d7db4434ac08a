import { existsSync, readFileSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** Unset SERVER_SECRET is generated once into DATA_DIR; `wx` makes two racing first starts agree on one file. */
export function loadOrCreateSecret(dataDir: string, configured?: string): Buffer {
  if (configured) return Buffer.from(configured.replace(/^0x/, ''), 'hex');
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'server-secret');
  if (!existsSync(path)) {
    try {
      writeFileSync(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  chmodSync(path, 0o600);
  const hex = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-fA-F]{64,}$/.test(hex)) throw new Error(`${path} does not hold a hex secret of at least 32 bytes`);
  return Buffer.from(hex, 'hex');
}
