import { readFileSync } from 'node:fs';

/**
 * The sanctions list the payment plane screens payers against. Sources: OFAC_LIST_PATH (a text
 * file of addresses one per line, `#` comments allowed, or the OFAC SDN XML where Ethereum
 * addresses appear as "Digital Currency Address - ETH" ids/features) plus OFAC_EXTRA (commas).
 */
export type SanctionsStatus = { listLoaded: boolean; extraConfigured: boolean; count: number };

export type SanctionsList = {
  /** True when the address is listed. Case-insensitive. */
  has(address: string): boolean;
  status(): SanctionsStatus;
  /** Whether screening can run: a list is loaded, or it is not required. */
  available(required: boolean): boolean;
  /** Why the file did not load, if it did not. */
  loadError: string | null;
};

const ADDRESS = /0x[0-9a-fA-F]{40}/g;

export function parseSanctionsText(text: string): string[] {
  if (/^\s*</.test(text)) return parseSdnXml(text);
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const clean = line.replace(/#.*/, '').trim();
    if (!clean) continue;
    for (const m of clean.matchAll(ADDRESS)) out.push(m[0].toLowerCase());
  }
  return out;
}

/**
 * SDN.XML lists addresses as `<id><idType>Digital Currency Address - ETH</idType><idNumber>0x..`;
 * the advanced format as a `<Feature>` whose type reads the same. Both are blocks that name the ETH
 * address type and hold the address, so we scan each such block. Other chains' addresses (XBT, TRX)
 * are skipped: they cannot pay on Base.
 */
export function parseSdnXml(xml: string): string[] {
  const out: string[] = [];
  const blocks = xml.match(/<(id|Feature|feature)\b[\s\S]*?<\/\1>/g) ?? [];
  for (const block of blocks) {
    if (!/Digital Currency Address - ETH\b/.test(block)) continue;
    for (const m of block.matchAll(ADDRESS)) out.push(m[0].toLowerCase());
  }
  return out;
}

export function loadSanctionsList(opts: { path?: string; extra?: string }): SanctionsList {
  const set = new Set<string>();
  let listLoaded = false;
  let loadError: string | null = null;
  if (opts.path) {
    try {
      for (const a of parseSanctionsText(readFileSync(opts.path, 'utf8'))) set.add(a);
      listLoaded = true;
    } catch (err) {
      loadError = `cannot read sanctions list ${opts.path}: ${(err as Error).message}`;
    }
  }
  const extras = (opts.extra ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const e of extras) if (/^0x[0-9a-fA-F]{40}$/.test(e)) set.add(e.toLowerCase());
  const extraConfigured = extras.length > 0;
  return {
    has: (address) => set.has(address.toLowerCase()),
    status: () => ({ listLoaded, extraConfigured, count: set.size }),
    available: (required) => listLoaded || !required,
    loadError,
  };
}
