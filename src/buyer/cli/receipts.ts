import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Flags } from '../../lib/flags.ts';
import { stateHomeOf } from '../../../packages/isocast-client/src/mcp/config.ts';
import type { CliIo } from './output.ts';

/**
 * A receipt token reads its wallet's signals without paying: a secret, kept under the state directory (not
 * the current one, where a checkout shows it), 0600 in a 0700 directory, written atomically, never printed.
 */
const RECEIPTS_FILE_NAME = 'receipts.json';
/** Where receipts lived before they moved to the state directory; only mentioned, never written. */
export const LEGACY_RECEIPTS_FILE = '.isocast/receipts.json';

/** `--receipts FILE`, else receipts.json in isocast/ under the state directory main.ts resolved. */
export function receiptsFileFor(flags: Flags, io: CliIo): string {
  return flags.values.receipts ?? join(io.stateHome ?? stateHomeOf(process.env), 'isocast', RECEIPTS_FILE_NAME);
}

const ReceiptSchema = z.object({
  server: z.string(),
  wallet: z.string(),
  city: z.string(),
  receiptToken: z.string(),
  paidThroughSeq: z.number().int(),
  latestSeq: z.number().int().nullable().optional(),
  count: z.number().int().nullable().optional(),
  amountUsd: z.number().nullable().optional(),
  txHash: z.string().nullable().optional(),
  /** `purchase` (isocast buy) or `recovered` (POST /v1/receipts). */
  source: z.enum(['purchase', 'recovered']).optional(),
  savedAt: z.string(),
});
export type Receipt = z.infer<typeof ReceiptSchema>;

const ReceiptFile = z.object({ version: z.literal(1), receipts: z.array(ReceiptSchema) });

export function loadReceipts(file: string): Receipt[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`cannot read receipts file ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`receipts file ${file} is not valid JSON`);
  }
  const parsed = ReceiptFile.safeParse(json);
  if (!parsed.success) throw new Error(`receipts file ${file} is not an isocast receipts file`);
  return parsed.data.receipts;
}

const sameKey = (a: Receipt, b: Receipt) =>
  a.server === b.server && a.wallet.toLowerCase() === b.wallet.toLowerCase() && a.city === b.city;

/** One record per (server, wallet, city): a newer record replaces the older one. */
export function saveReceipts(file: string, records: readonly Receipt[]): void {
  writeReceipts(file, [...loadReceipts(file).filter((x) => !records.some((r) => sameKey(x, r))), ...records]);
}

/** Drops every saved record of `wallet` at `server` (its tokens were revoked); returns how many. */
export function forgetReceipts(file: string, server: string, wallet: string): number {
  const all = loadReceipts(file);
  const kept = all.filter((r) => !(r.server === server && r.wallet.toLowerCase() === wallet.toLowerCase()));
  if (kept.length !== all.length) writeReceipts(file, kept);
  return all.length - kept.length;
}

function writeReceipts(file: string, receipts: readonly Receipt[]): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ version: 1, receipts }, null, 2) + '\n', { mode: 0o600 });
  // writeFileSync's mode only applies to a new file (and passes through the umask): set it outright.
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** The newest receipt for this server and city, else for this server (a token reads all its wallet's cities). */
export function findReceipt(
  receipts: readonly Receipt[],
  { server, city, wallet }: { server: string; city: string; wallet?: string | undefined },
): Receipt | null {
  const mine = receipts
    .filter((r) => r.server === server && (!wallet || r.wallet.toLowerCase() === wallet.toLowerCase()))
    .sort((a, b) => b.savedAt.localeCompare(a.savedAt));
  return mine.find((r) => r.city === city) ?? mine[0] ?? null;
}

/** `https://a (nyc, london); http://127.0.0.1:8402 (paris)`: the servers this file holds receipts for. */
export function describeServers(receipts: readonly Receipt[]): string {
  const byServer = new Map<string, Set<string>>();
  for (const r of receipts) byServer.set(r.server, (byServer.get(r.server) ?? new Set()).add(r.city));
  return [...byServer].map(([s, cities]) => `${s} (${[...cities].join(', ')})`).join('; ');
}
