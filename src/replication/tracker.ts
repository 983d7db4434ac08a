/** Lag: the age of the oldest commit no finished upload covers (one covers what was seen before it began). */
export type ReplicaStatus = ReturnType<ReturnType<typeof createReplicaTracker>['status']>;

/** A replica is "not syncing" once a commit has waited this long (or Litestream is down with work). */
const STALL_MS = 10_000;
/** At most one warning a minute, whatever the rate of failures underneath. */
export const WARN_EVERY_MS = 60_000;

export function createReplicaTracker() {
  // Times commits were seen, oldest first; `head` skips the ones already uploaded.
  let pending: number[] = [];
  let head = 0;
  let uploadBegan: number | null = null;
  let lastSyncAt: number | null = null;
  let failures = 0;
  let failuresAtWarning = 0;
  let lastError: string | null = null;
  let lastWarnAt = Number.NEGATIVE_INFINITY;
  let up = false;

  const oldest = () => (head < pending.length ? pending[head]! : null);
  const lagAt = (now: number) => {
    const o = oldest();
    return o === null ? 0 : Math.max(0, now - o);
  };

  return {
    changed(now: number) {
      // One entry per poll is enough: the oldest of a poll's commits decides the lag.
      if (pending.length > head && pending[pending.length - 1] === now) return;
      pending.push(now);
    },
    uploadStarted(now: number) {
      uploadBegan = now;
    },
    uploadWritten(now: number) {
      lastSyncAt = now;
      if (uploadBegan === null) return;
      while (head < pending.length && pending[head]! <= uploadBegan) head++;
      uploadBegan = null;
      if (head > 1024 && head * 2 > pending.length) {
        pending = pending.slice(head);
        head = 0;
      }
    },
    failed(_now: number, message: string) {
      failures++;
      lastError = message;
    },
    /** The Litestream process started (`up`) or exited; either way no upload is in flight. */
    setUp(state: { up: boolean }) {
      up = state.up;
      uploadBegan = null;
    },
    status(now: number) {
      return { up, lagMs: lagAt(now), lastSyncAt, failures, lastError };
    },
    /** A warning to log now, or null: when the replica is stalled and none was given this minute. */
    warning(now: number) {
      const lagMs = lagAt(now);
      const stalled = lagMs >= STALL_MS || (!up && oldest() !== null) || failures > failuresAtWarning;
      if (!stalled || now - lastWarnAt < WARN_EVERY_MS) return null;
      // Errors alone, with nothing waiting, are still worth the once-a-minute line.
      lastWarnAt = now;
      const w = { lagMs, up, lastSyncAt, failuresSinceLastWarning: failures - failuresAtWarning, lastError };
      failuresAtWarning = failures;
      return w;
    },
  };
}
