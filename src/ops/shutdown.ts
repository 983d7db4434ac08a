import type { Logger } from '../lib/logger.ts';

/**
 * Shutdown for money, in this order: stop accepting connections; let in-flight
 * requests (purchases mid-settle above all) finish, for longer than the settler's own timeouts;
 * then the reconciler, the poller and the delivery worker; the database; Litestream last. A settle still
 * running at the deadline is marked in doubt before the exit, and the next start's reconciler
 * asks the token contract about it (a SIGKILL leaves a `claimed` row, resolved the same way).
 */
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
  /** Stopped in this order once requests are done (reconciler, poller, worker). */
  workers: Stoppable[];
  closeDb(): void;
  /** Answers held long-poll reads now instead of after up to 25 s (signals/notifier.ts). */
  releaseWaiters?: () => void;
  /** Stopped after the database closed: Litestream (src/replication/), whose final sync sees every commit. */
  afterDb?: Stoppable[];
  /** The settler's longest settle (Settler.maxSettleMs). */
  maxSettleMs: number;
  exit?: (code: number) => void;
  /** Margin over maxSettleMs (SHUTDOWN_MARGIN_MS); tests shorten it. */
  marginMs?: number;
};

/** Margin over the settler's own timeouts, for the answer to be written and the database closed. */
const SHUTDOWN_MARGIN_MS = 10_000;
/** After the last purchase, how long other requests (and kept-alive sockets) get to finish. */
const ANSWER_GRACE_MS = 5_000;

export function shutdownDeadlineMs(maxSettleMs: number, marginMs = SHUTDOWN_MARGIN_MS): number {
  return maxSettleMs + marginMs;
}

export function createShutdown(deps: ShutdownDeps): (signal: string) => Promise<void> {
  const exit = deps.exit ?? ((code: number) => process.exit(code));
  const { logger } = deps;
  let stopping: Promise<void> | null = null;

  async function run(signal: string): Promise<void> {
    const deadlineMs = shutdownDeadlineMs(deps.maxSettleMs, deps.marginMs);
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
      // 1. No new connections (a new purchase cannot start); idle keep-alive sockets are closed
      // so the listener can finish once the in-flight requests have been answered.
      // A kept-alive connection can still carry a request: the plane refuses new purchases too.
      deps.plane.stopAccepting();
      deps.releaseWaiters?.();
      const closed = new Promise<void>((resolve) => deps.server.close(() => resolve()));
      deps.server.closeIdleConnections?.();
      // 2. In-flight purchases finish (settle, record, apply) and their answers are written.
      await deps.plane.drain();
      deps.server.closeIdleConnections?.();
      await Promise.race([closed, new Promise((r) => setTimeout(r, ANSWER_GRACE_MS).unref())]);
      deps.server.closeAllConnections?.();
      // 3. Background work, 4. the database, 5. what must outlive it (the replication).
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

/** SIGTERM and SIGINT run the shutdown once. */
export function installShutdownSignals(shutdown: (signal: string) => Promise<void>): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void shutdown(signal));
}
