import { statSync } from 'node:fs';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { SanctionsList } from './list.ts';

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
