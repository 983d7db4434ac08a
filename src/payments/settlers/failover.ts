import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { SupportedResult } from './negotiate.ts';
import type { SettleOutcome, SettleRequest, Settler } from './settler.ts';

/**
 * FACILITATOR_URL in order: one that took nothing where money could move (`unavailable`) is skipped; any other answer,
 * in doubt too, is final (the token takes an authorization once). A down one is asked last until COOL_OFF_MS.
 */
const COOL_OFF_MS = 30_000;
const WARN_EVERY_MS = 60_000;

export type FacilitatorHealth = {
  name: string;
  up: boolean;
  reason: string | null;
  downSinceMs: number | null;
  /** Requests it answered (any answer but `unavailable`) and requests it was skipped in. */
  answered: number;
  skipped: number;
};

export type FailoverSettler = Settler & {
  health(): FacilitatorHealth[];
  /** Each facilitator's /supported, in order (doctor). */
  supportedEach(): Promise<{ name: string; result: SupportedResult }[]>;
};

export function createFailoverSettler(
  entries: readonly { name: string; settler: Settler }[],
  opts: { now: () => number; logger?: Logger; onSkip?: (name: string) => void },
): FailoverSettler {
  if (entries.length === 0) throw new Error('no facilitator configured');
  const state = entries.map(({ name, settler }) => ({
    settler,
    warnedAtMs: Number.NEGATIVE_INFINITY,
    h: { name, up: true, reason: null, downSinceMs: null, answered: 0, skipped: 0 } as FacilitatorHealth,
  }));

  /** Up ones first in their order, then down ones; a down one whose cool-off passed counts as up. */
  function order(nowMs: number) {
    const rested = ({ h }: (typeof state)[number]) => h.downSinceMs === null || nowMs - h.downSinceMs >= COOL_OFF_MS;
    return [...state.filter(rested), ...state.filter((s) => !rested(s))];
  }

  function skipped(s: (typeof state)[number], reason: string, nowMs: number) {
    const { h } = s;
    h.skipped++;
    h.reason = reason;
    h.up = false;
    if (h.downSinceMs === null || nowMs - h.downSinceMs >= COOL_OFF_MS) h.downSinceMs = nowMs;
    opts.onSkip?.(h.name);
    if (nowMs - s.warnedAtMs >= WARN_EVERY_MS) {
      s.warnedAtMs = nowMs;
      opts.logger?.warn('facilitator unavailable; the next one is asked', { facilitator: h.name, reason });
    }
  }

  function answered({ h }: (typeof state)[number]) {
    h.answered++;
    if (h.up) return;
    opts.logger?.info('facilitator answering again', { facilitator: h.name });
    h.up = true;
    h.downSinceMs = null;
    h.reason = null;
  }

  return {
    kind: 'facilitator',
    maxSettleMs: entries.reduce((sum, e) => sum + e.settler.maxSettleMs, 0),
    async settle(req: SettleRequest): Promise<SettleOutcome> {
      const reasons: string[] = [];
      for (const s of order(opts.now())) {
        const out = await s.settler.settle(req);
        if (out.ok || !out.unavailable) {
          answered(s);
          return out;
        }
        skipped(s, out.reason, opts.now());
        if (state.length === 1) return out;
        reasons.push(`${s.h.name}: ${out.reason}`);
      }
      // Nothing was sent anywhere money could move: truly not charged.
      return {
        ok: false,
        inDoubt: false,
        unavailable: true,
        reason: `no facilitator available (${reasons.join('; ')})`,
      };
    },
    // The token contract's answer is the same whoever asks: the first one's RPC lookup.
    status: entries[0]!.settler.status,
    async supported() {
      const all = await Promise.all(state.map((s) => s.settler.supported!()));
      // What serve needs: the first one that lists our kind, else the first problem.
      return all.find((r) => r.ok) ?? all.find((r) => !r.ok && r.problem === 'unanswered') ?? all[0]!;
    },
    async supportedEach() {
      return Promise.all(state.map(async (s) => ({ name: s.h.name, result: await s.settler.supported!() })));
    },
    health: () => state.map((s) => ({ ...s.h })),
    close() {
      for (const s of state) s.settler.close?.();
    },
  };
}

/** `health` is an arrow over the failover's own state: no `this` to bind. */
export const facilitatorHealthOf = (settler: Settler) => (settler as Partial<FailoverSettler>).health;

/** /metrics: isocast_facilitator_up per facilitator (read at scrape), skips counted as they happen. */
export function facilitatorMetrics(metrics: Metrics) {
  const skips = metrics.counter(
    'isocast_facilitator_skips_total',
    'Payments a facilitator could not take (nothing sent), so the next one was asked',
  );
  const up = metrics.gauge('isocast_facilitator_up', '1 while a facilitator answers, 0 once it was skipped');
  return {
    onSkip: (facilitator: string) => skips.inc({ facilitator }),
    watch(settler: Settler) {
      const health = facilitatorHealthOf(settler);
      if (!health) return;
      metrics.collect(() => {
        for (const f of health()) up.set(f.up ? 1 : 0, { facilitator: f.name });
      });
    },
  };
}
