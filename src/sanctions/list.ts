import { readFileSync, statSync } from 'node:fs';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { splitList } from '../lib/url-credentials.ts';

/** The sanctions list the payment plane screens payers against: OFAC_LIST_PATH plus OFAC_EXTRA (commas). */
export type SanctionsList = ReturnType<typeof loadSanctionsList>;
export type SanctionsStatus = ReturnType<SanctionsList['status']>;

const ADDRESS = /0x[0-9a-fA-F]{40}/g;

/**
 * OFAC_LIST_PATH in plain text: addresses one per line, `#` comments. SDN.XML lists addresses as
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

/**
 * Keeps the sanctions list current: `reload(reason)` is what SIGHUP calls, and a changed file is
 * picked up within a minute. A bad file warns once per version of it, not every tick.
 */
const SANCTIONS_CHECK_MS = 60_000;

export function watchSanctionsList(
  list: SanctionsList,
  deps: { logger: Logger; clock: Clock; metrics?: Metrics; intervalMs?: number },
) {
  const { logger } = deps;
  const reloads = deps.metrics?.counter(
    'isocast_sanctions_reloads_total',
    'Sanctions list reload attempts by trigger and result (a failed one keeps the last good list)',
  );
  if (deps.metrics) {
    const age = deps.metrics.gauge(
      'isocast_sanctions_list_age_seconds',
      'Seconds since the sanctions list file in force was modified (-1: none loaded)',
    );
    const size = deps.metrics.gauge(
      'isocast_sanctions_list_addresses',
      'Addresses screened against (file plus OFAC_EXTRA)',
    );
    deps.metrics.collect(() => {
      const st = list.status(deps.clock.now());
      age.set(st.ageSeconds ?? -1);
      size.set(st.count);
    });
  }
  const signature = (): string | null => {
    if (!list.path) return null;
    try {
      const st = statSync(list.path);
      return `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      return 'missing';
    }
  };
  let seen = signature();
  let timer: NodeJS.Timeout | null = null;

  const reload = (reason: string) => {
    if (!list.path) {
      logger.warn('sanctions list reload asked but OFAC_LIST_PATH is unset', { reason });
      return;
    }
    seen = signature();
    const r = list.reload();
    reloads?.inc({ reason, result: r.ok ? 'ok' : 'kept_previous' });
    if (r.ok) logger.info('sanctions list reloaded', { reason, path: list.path, count: list.status().count });
    else
      logger.warn('sanctions list not reloaded; the previous list stays in force', {
        reason,
        path: list.path,
        error: r.error,
        listLoaded: list.status().listLoaded,
      });
  };
  const check = () => {
    if (signature() !== seen) reload('file_changed');
  };
  return {
    reload,
    start: () => {
      if (!list.path || timer) return;
      timer = setInterval(check, deps.intervalMs ?? SANCTIONS_CHECK_MS);
      timer.unref();
    },
    stop: () => {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
