import { readFileSync, statSync } from 'node:fs';
import type { Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { UsageError } from '../../lib/flags.ts';

/** The buyer's signing key, from `--key-file` or ISOCAST_KEY; only signatures leave this process. */
const KEY = /^(0x)?([0-9a-fA-F]{64})$/;

function parseKey(text: string, where: string): Hex {
  const m = KEY.exec(text.trim());
  if (!m) throw new UsageError(`${where} does not hold a private key (expected 64 hex characters, 0x-prefixed or not)`);
  return `0x${m[2]!.toLowerCase()}`;
}

/** Returns the account and, when the key file is readable by others, a warning to show. */
export function loadAccount(src: { keyFile?: string; envKey?: string }): {
  account: PrivateKeyAccount;
  warning: string | null;
} {
  let key: Hex;
  let warning: string | null = null;
  if (src.keyFile) {
    let text: string;
    try {
      text = readFileSync(src.keyFile, 'utf8');
    } catch (err) {
      throw new UsageError(
        `cannot read --key-file ${src.keyFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    key = parseKey(text, `--key-file ${src.keyFile}`);
    if (process.platform !== 'win32' && (statSync(src.keyFile).mode & 0o077) !== 0) {
      warning = `${src.keyFile} is readable by other users; chmod 600 it`;
    }
  } else if (src.envKey) {
    key = parseKey(src.envKey, 'ISOCAST_KEY');
  } else {
    throw new UsageError('a wallet key is needed: --key-file <file> or the ISOCAST_KEY environment variable');
  }
  return { account: privateKeyToAccount(key), warning };
}
