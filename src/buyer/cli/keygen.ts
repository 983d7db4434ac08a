import { existsSync, writeFileSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseFlags, UsageError } from '../../lib/flags.ts';
import { EXIT, type CliIo } from './output.ts';

/** `isocast keygen`: a throwaway key for trying isocast, so nobody exports a real wallet's key to follow the README. */
const KEYGEN_FLAGS = { strings: ['out'], booleans: ['json'] } as const;
const WARNING =
  'a new throwaway key for testing: it holds no funds; do not send real USDC to it or reuse it for anything of value';

export async function keygenCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, KEYGEN_FLAGS);
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  const out = flags.values.out;
  if (out !== undefined) {
    if (existsSync(out)) throw new UsageError(`--out ${out} already exists; refusing to overwrite a key`);
    writeFileSync(out, `${key}\n`, { mode: 0o600, flag: 'wx' });
  }
  io.stderr(`warning: ${WARNING}`);
  if (flags.on.has('json')) io.stdout(JSON.stringify(out ? { address, keyFile: out } : { address, key }));
  else if (out) io.stdout(`address ${address}; key written to ${out} (mode 0600): use --key-file ${out}`);
  else {
    io.stdout(`ISOCAST_KEY=${key}`);
    io.stdout(`address ${address}`);
  }
  return EXIT.ok;
}
