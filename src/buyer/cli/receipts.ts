import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PrivateKeyAccount } from 'viem/accounts';
import { z } from 'zod';
import { type Flags, intFlag, parseFlags } from '../../lib/flags.ts';
import {
  type ReceiptFailure,
  type ReceiptSignedKind,
  readReceiptAnswer,
  readRevocationAnswer,
  signReceiptBody,
} from '../../../packages/isocast-client/src/index.ts';
import { stateHomeOf } from '../../../packages/isocast-client/src/mcp/config.ts';
import { createClient, serverFlags, serverUrl, type Client } from './client.ts';
import { loadAccount } from './key.ts';
import { CliError, EXIT, type CliIo } from './output.ts';

/**
 * A receipt token reads its wallet's signals without paying: a secret, kept under the state directory (not
 * the current one, where a checkout shows it), 0600 in a 0700 directory, written atomically, never printed.
 */
/** Where receipts lived before they moved to the state directory; only mentioned, never written. */
export const LEGACY_RECEIPTS_FILE = '.isocast/receipts.json';

/** `--receipts FILE`, else under the state directory main.ts resolved. */
export function receiptsFileFor(flags: Flags, io: CliIo): string {
  return flags.values.receipts ?? join(io.stateHome ?? stateHomeOf(process.env), 'isocast', 'receipts.json');
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
function forgetReceipts(file: string, server: string, wallet: string): number {
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

/** Signs `kind` for this client's server and posts it; never a second time on its own ("signature already used"). */
async function signedPost(client: Client, account: PrivateKeyAccount, o: { kind: ReceiptSignedKind; nowMs: number }) {
  const body = await signReceiptBody(account, {
    server: client.server,
    kind: o.kind,
    timestampS: Math.floor(o.nowMs / 1000),
  });
  return client.request('POST', o.kind === 'ReceiptRequest' ? '/v1/receipts' : '/v1/receipts/revoke', { body });
}

/** A signed receipt request the server did not grant, in words a buyer can act on. */
function signedRefusal(what: string, f: { reason: ReceiptFailure; status: number; error: string }): CliError {
  if (f.reason === 'signature-used')
    return new CliError(
      `${what} refused: signature already used. This exact signed request reached the server before; if you did not send it ` +
        '(or another isocast run in the same second did not), a copy of your signature was used: run isocast receipt --revoke. ' +
        'Otherwise run the command again in a second (a new timestamp is a new signature).',
    );
  if (f.reason === 'clock') return new CliError(`${what} refused: ${f.error} (check this machine's clock)`);
  if (f.status === 401) return new CliError(`${what} refused: ${f.error}`);
  return new CliError(`${what} failed with HTTP ${f.status}: ${f.error}`);
}

/** null when the server has no such endpoint (an older isocast). */
export async function recoverReceipts(
  client: Client,
  account: PrivateKeyAccount,
  { file, nowMs }: { file: string; nowMs: number },
) {
  const a = await signedPost(client, account, { kind: 'ReceiptRequest', nowMs });
  const answer = readReceiptAnswer(a.status, a.body);
  if (!answer.ok) {
    if (answer.reason === 'no-purchases')
      throw new CliError(
        `${client.server} has no purchases for wallet ${account.address}; buy first: isocast buy --city <slug> --count 20`,
        EXIT.paymentNeeded,
      );
    if (answer.reason === 'unsupported') return null;
    if (a.status === 200) throw new CliError(`${answer.error}; nothing was saved`);
    throw signedRefusal('receipt recovery', answer);
  }
  const { receiptToken, cities } = answer.value;
  const savedAt = new Date(nowMs).toISOString();
  const receipts: Receipt[] = cities.map((c) => ({
    server: client.server,
    wallet: account.address,
    city: c.city,
    receiptToken,
    paidThroughSeq: c.paidThroughSeq,
    source: 'recovered',
    savedAt,
  }));
  if (receipts.length > 0) saveReceipts(file, receipts);
  return { receipts, cities };
}

/** `isocast receipt`: the wallet's receipt token back for a free signature; prints its cities, never the token. */
const RECEIPT_FLAGS = serverFlags(['key-file', 'receipts'], ['revoke']);

export async function receiptCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, RECEIPT_FLAGS);
  const server = serverUrl(flags, io.envServer);
  const receiptsFile = receiptsFileFor(flags, io);
  const account = loadAccount(flags, io);
  const client = createClient(server, intFlag(flags, 'timeout', { fallback: 15, min: 1 }) * 1000);
  const nowMs = io.nowMs?.() ?? Date.now();
  const json = flags.on.has('json');
  if (flags.on.has('revoke')) {
    // One signature stops every token of the wallet at this server; its saved records are dropped.
    const a = await signedPost(client, account, { kind: 'ReceiptRevocation', nowMs });
    const answer = readRevocationAnswer(a.status, a.body);
    if (!answer.ok && answer.reason === 'unsupported')
      throw new CliError(
        `${server} does not offer token revocation (POST /v1/receipts/revoke); it is an older isocast`,
      );
    if (!answer.ok) throw signedRefusal('revocation', answer);
    const { revoked } = answer.value;
    const forgotten = forgetReceipts(receiptsFile, server, account.address);
    if (json) io.stdout(JSON.stringify({ wallet: account.address, server, revoked, forgotten }));
    else
      io.stdout(
        `revoked ${revoked} receipt token(s) of ${account.address} at ${server}; removed ${forgotten} saved record(s) from ${receiptsFile}. ` +
          'Your entitlements are unchanged: isocast receipt gets a new token.',
      );
    return EXIT.ok;
  }
  const r = await recoverReceipts(client, account, { file: receiptsFile, nowMs });
  if (!r) throw new CliError(`${server} does not offer receipt recovery (POST /v1/receipts); it is an older isocast`);
  if (json) {
    io.stdout(JSON.stringify({ wallet: account.address, server, cities: r.cities, receiptsFile }));
  } else {
    io.stdout(`receipt for ${account.address} at ${server} saved to ${receiptsFile} (mode 0600)`);
    for (const c of r.cities) io.stdout(`  ${c.city}: entitled through seq ${c.paidThroughSeq}`);
  }
  return EXIT.ok;
}
