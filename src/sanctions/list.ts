import { readFileSync, statSync } from 'node:fs';
import { splitList } from '../lib/url-credentials.ts';

/**
 * The sanctions list the payment plane screens payers against. Sources: OFAC_LIST_PATH (a text
 * file of addresses one per line, `#` comments allowed, or the OFAC SDN XML where Ethereum
 * addresses appear as "Digital Currency Address - ETH" ids/features) plus OFAC_EXTRA (commas).
 */
export type SanctionsList = ReturnType<typeof loadSanctionsList>;
export type SanctionsStatus = ReturnType<SanctionsList['status']>;

const ADDRESS = /0x[0-9a-fA-F]{40}/g;

/**
 * Plain text: addresses one per line, `#` comments. SDN.XML lists addresses as
 * `<id><idType>Digital Currency Address - ETH</idType><idNumber>0x..`; the advanced format as a
 * `<Feature>` whose type reads the same, so we scan each such block. Other chains' addresses (XBT,
 * TRX) are skipped: they cannot pay on Base.
 */
function parseSanctionsText(text: string): string[] {
  const blocks = /^\s*</.test(text)
    ? (text.match(/<(id|Feature|feature)\b[\s\S]*?<\/\1>/g) ?? []).filter((b) =>
        /Digital Currency Address - ETH\b/.test(b),
      )
    : text.split(/\r?\n/).map((line) => line.replace(/#.*/, ''));
  return blocks.flatMap((b) => Array.from(b.matchAll(ADDRESS), (m) => m[0].toLowerCase()));
}

type ReloadResult = { ok: true; count: number } | { ok: false; error: string };

/**
 * Loads the list and keeps it replaceable: `reload()` swaps in the new file only if it holds at
 * least one address, so an empty, truncated or misformatted file never empties screening.
 */
export function loadSanctionsList(opts: { path?: string; extra?: string }) {
  const extras = splitList(opts.extra ?? '');
  const extraSet = new Set(extras.filter((e) => /^0x[0-9a-fA-F]{40}$/.test(e)).map((e) => e.toLowerCase()));
  let fileSet = new Set<string>();
  let listLoaded = false;
  let loadError: string | null = null;
  let mtimeMs: number | null = null;

  const failed = (error: string): ReloadResult => {
    // Before any good load the error is the list's state; after one, it is only this attempt's.
    if (!listLoaded) loadError = error;
    return { ok: false, error };
  };
  /** Re-reads OFAC_LIST_PATH; a file that fails or holds no address keeps the previous list. */
  const reload = (): ReloadResult => {
    const path = opts.path;
    if (!path) return { ok: false, error: 'no OFAC_LIST_PATH configured' };
    let text: string;
    let mtime: number;
    try {
      mtime = statSync(path).mtimeMs;
      text = readFileSync(path, 'utf8');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      return failed(`cannot read sanctions list ${path}: ${e.code ?? e.message}`);
    }
    const set = new Set(parseSanctionsText(text));
    if (set.size === 0) return failed(`sanctions list ${path} holds no addresses (empty or not in a known format)`);
    fileSet = set;
    mtimeMs = mtime;
    listLoaded = true;
    loadError = null;
    return { ok: true, count: set.size };
  };
  if (opts.path) reload();

  return {
    has: (address: string): boolean => {
      const a = address.toLowerCase();
      return fileSet.has(a) || extraSet.has(a);
    },
    status: (nowMs = Date.now()) => ({
      listLoaded,
      extraConfigured: extras.length > 0,
      count: fileSet.size + [...extraSet].filter((e) => !fileSet.has(e)).length,
      // Seconds since the loaded file was last modified: how old the list in force is. Null without one.
      ageSeconds: mtimeMs === null ? null : Math.max(0, Math.floor((nowMs - mtimeMs) / 1000)),
    }),
    /** Whether screening can run: a list is loaded, or it is not required. */
    available: ({ required }: { required: boolean }) => listLoaded || !required,
    /** Why the file did not load, if no version of it ever did. */
    get loadError(): string | null {
      return loadError;
    },
    reload,
    path: opts.path ?? null,
  };
}
