import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';

/**
 * The buyer's local receipt file (default `./.isocast/receipts.json`). A receipt token reads the
 * paying wallet's signals without paying again, so it is a secret: the file is written 0600 in a
 * 0700 directory, atomically (temp file + rename), and its tokens are never printed.
 */
export const DEFAULT_RECEIPTS_FILE = '.isocast/receipts.json';

const Receipt = z.object({
  server: z.string(),
  wallet: z.string(),
  city: z.string(),
  receiptToken: z.string(),
  paidThroughSeq: z.number().int(),
  latestSeq: z.number().int(),
  count: z.number().int(),
  amountUsd: z.number(),
  txHash: z.string().nullable(),
  savedAt: z.string(),
});
export type Receipt = z.infer<typeof Receipt>;

const ReceiptFile = z.object({ version: z.literal(1), receipts: z.array(Receipt) });

export function loadReceipts(file: string): Receipt[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`cannot read receipts file ${file}: ${(err as Error).message}`);
  }
  const parsed = ReceiptFile.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`receipts file ${file} is not an isocast receipts file`);
  return parsed.data.receipts;
}

/** One record per (server, wallet, city): a newer purchase replaces the older record. */
export function saveReceipt(file: string, r: Receipt): void {
  const same = (x: Receipt) => x.server === r.server && x.wallet.toLowerCase() === r.wallet.toLowerCase() && x.city === r.city;
  const receipts = [...loadReceipts(file).filter((x) => !same(x)), r];
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ version: 1, receipts }, null, 2) + '\n', { mode: 0o600 });
  // writeFileSync's mode only applies to a new file (and passes through the umask): set it outright.
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/**
 * The token to read a city with: the newest receipt for this server and city, else the newest
 * for this server (a token reads all of its wallet's cities). `wallet` narrows the choice.
 */
export function findReceipt(receipts: readonly Receipt[], server: string, city: string, wallet?: string): Receipt | null {
  const mine = receipts
    .filter((r) => r.server === server && (!wallet || r.wallet.toLowerCase() === wallet.toLowerCase()))
    .sort((a, b) => b.savedAt.localeCompare(a.savedAt));
  return mine.find((r) => r.city === city) ?? mine[0] ?? null;
}
