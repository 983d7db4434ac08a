import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { type Flags, parseFlags, UsageError } from '../../lib/flags.ts';
import { EXIT, type CliIo } from './output.ts';

/** The buyer's signing key, from `--key-file` or ISOCAST_KEY; only signatures leave this process. */
const KEY = /^(0x)?([0-9a-fA-F]{64})$/;

function parseKey(text: string, where: string): Hex {
  const m = KEY.exec(text.trim());
  if (!m) throw new UsageError(`${where} does not hold a private key (expected 64 hex characters, 0x-prefixed or not)`);
  return `0x${m[2]!.toLowerCase()}`;
}

/** A key file others can read is warned about on `io.stderr`, when one is given. */
export function loadAccount(
  flags: Flags,
  io: Pick<CliIo, 'envKey'> & Partial<Pick<CliIo, 'stderr'>>,
): PrivateKeyAccount {
  const keyFile = flags.values['key-file'];
  let key: Hex;
  if (keyFile) {
    let text: string;
    try {
      text = readFileSync(keyFile, 'utf8');
    } catch (err) {
      throw new UsageError(
        `cannot read --key-file ${keyFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    key = parseKey(text, `--key-file ${keyFile}`);
    if (process.platform !== 'win32' && (statSync(keyFile).mode & 0o077) !== 0) {
      io.stderr?.(`warning: ${keyFile} is readable by other users; chmod 600 it`);
    }
  } else if (io.envKey) {
    key = parseKey(io.envKey, 'ISOCAST_KEY');
  } else {
    throw new UsageError('a wallet key is needed: --key-file <file> or the ISOCAST_KEY environment variable');
  }
  return privateKeyToAccount(key);
}

/** `isocast keygen`: a throwaway key for trying isocast, so nobody exports a real wallet's key to follow the README. */
export async function keygenCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, { strings: ['out'], booleans: ['json'] });
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  const out = flags.values.out;
  if (out !== undefined) {
    if (existsSync(out)) throw new UsageError(`--out ${out} already exists; refusing to overwrite a key`);
    writeFileSync(out, `${key}\n`, { mode: 0o600, flag: 'wx' });
  }
  io.stderr(
    'warning: a new throwaway key for testing: it holds no funds; do not send real USDC to it or reuse it for anything of value',
  );
  if (flags.on.has('json')) io.stdout(JSON.stringify(out ? { address, keyFile: out } : { address, key }));
  else if (out) io.stdout(`address ${address}; key written to ${out} (mode 0600): use --key-file ${out}`);
  else {
    io.stdout(`ISOCAST_KEY=${key}`);
    io.stdout(`address ${address}`);
  }
  return EXIT.ok;
}
