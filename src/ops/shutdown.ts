import type { Logger } from '../lib/logger.ts';

/** Purchases in flight finish first, Litestream stops last; a settle left at the deadline is marked in doubt. */
type Stoppable = { stop(): Promise<void> | void };

type ShutdownDeps = {
  logger: Logger;
  server: { close(cb?: (err?: Error) => void): unknown; closeIdleConnections?(): void; closeAllConnections?(): void };
  plane: {
    stopAccepting(): void;
    drain(): Promise<void>;
    inflightCount(): number;
    strandInflight(reason: string): number;
  };
  /** Stopped in order once requests are done; `afterDb` once the database closed (Litestream: its final sync sees every commit). */
  workers: Stoppable[];
  closeDb(): void;
  /** Answers held long-poll reads now instead of after up to 25 s (signals/notifier.ts). */
  releaseWaiters?: () => void;
  afterDb?: Stoppable[];
  maxSettleMs: number;
  exit?: (code: number) => void;
  marginMs?: number;
};

/** Margin over the settler's own timeouts, for the answer to be written and the database closed. */
const SHUTDOWN_MARGIN_MS = 10_000;
/** After the last purchase, how long other requests (and kept-alive sockets) get to finish. */
const ANSWER_GRACE_MS = 5_000;

export function createShutdown(deps: ShutdownDeps): (signal: string) => Promise<void> {
  const exit = deps.exit ?? ((code: number) => process.exit(code));
  const { logger } = deps;
  let stopping: Promise<void> | null = null;

  async function run(signal: string): Promise<void> {
    const deadlineMs = deps.maxSettleMs + (deps.marginMs ?? SHUTDOWN_MARGIN_MS);
    logger.info('shutting down', { signal, inflightPayments: deps.plane.inflightCount(), deadlineMs });
    let finished = false;
    const force = setTimeout(() => {
      if (finished) return;
      const stranded = deps.plane.strandInflight('shutdown deadline passed mid-settle');
      logger.warn('forced exit at the shutdown deadline', { deadlineMs, strandedInDoubt: stranded });
      try {
        deps.closeDb();
      } catch {
        /* the exit below is what matters */
      }
      exit(1);
    }, deadlineMs);
    force.unref();
    try {
      // No new connections; a kept-alive one can still carry a request, so the plane refuses
      // new purchases too. Idle sockets close so the listener can finish.
      deps.plane.stopAccepting();
      deps.releaseWaiters?.();
      const closed = new Promise<void>((resolve) => deps.server.close(() => resolve()));
      deps.server.closeIdleConnections?.();
      await deps.plane.drain();
      deps.server.closeIdleConnections?.();
      await Promise.race([closed, new Promise((r) => setTimeout(r, ANSWER_GRACE_MS).unref())]);
      deps.server.closeAllConnections?.();
      for (const w of deps.workers) await w.stop();
      deps.closeDb();
      for (const w of deps.afterDb ?? []) await w.stop();
      finished = true;
      clearTimeout(force);
      logger.info('stopped');
      exit(0);
    } catch (err) {
      finished = true;
      clearTimeout(force);
      logger.error('shutdown failed', { err });
      exit(1);
    }
  }

  return (signal) => (stopping ??= run(signal));
}

export function installShutdownSignals(shutdown: (signal: string) => Promise<void>): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void shutdown(signal));
}
