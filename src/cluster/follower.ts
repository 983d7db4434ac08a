import type { Logger } from '../lib/logger.ts';
import type { Applier, StreamMessage } from './applier.ts';
import type { LinkStatus, NatsLink } from './nats-link.ts';
import { HEARTBEAT_SUBJECT, STREAM, type Change, type Heartbeat } from './tables.ts';

/**
 * A reader's follower: an ordered consumer started after the last sequence the reader's file holds
 * (each message is applied with its sequence in one transaction), so any failure just reconnects
 * from there and a NATS restart costs no replay. A heartbeat applied as the stream's last message
 * means this copy held everything the primary had committed when it left: that is the lag.
 */
/** No message at all (the primary heartbeats every second) for this long: rebuild the consumer. */
const STALL_MS = 5_000;
const RETRY_MS = 1_000;

export type FollowerStatus = LinkStatus & {
  appliedSeq: number;
  /** ms behind the primary, or null before the first heartbeat that found this copy current. */
  lagMs: number | null;
};

type Follower = { lagMs(): number | null; status(): FollowerStatus; stop(): Promise<void> };

export function startFollower(deps: { link: NatsLink; applier: Applier; logger: Logger; now: () => number }): Follower {
  const { link, applier, logger } = deps;
  let stopped = false;
  let caughtUpAt: number | null = null;
  let lastError: string | null = null;
  let current: { stop(): void } | null = null;
  let retry: { timer: NodeJS.Timeout; resolve(): void } | null = null;

  const lagMs = () => (caughtUpAt === null ? null : Math.max(0, deps.now() - caughtUpAt));

  async function follow(): Promise<void> {
    const nats = await link.ensure();
    if (applier.streamCreated() !== nats.streamCreated) {
      if (applier.streamCreated() !== null)
        logger.warn('replication stream was recreated; replaying it from the start', { was: applier.streamCreated() });
      applier.restartFor(nats.streamCreated);
    }
    const from = applier.appliedSeq() + 1;
    const consumer = await nats.js.consumers.get(STREAM, {
      deliver_policy: 'by_start_sequence' as never,
      opt_start_seq: from,
    });
    const messages = await consumer.consume({ max_messages: 512 });
    current = messages;
    let last = Date.now();
    const watchdog = setInterval(() => {
      if (Date.now() - last > STALL_MS) messages.stop();
    }, 1_000);
    try {
      for await (const m of messages) {
        last = Date.now();
        if (m.seq <= applier.appliedSeq()) continue;
        const body = m.json<Change | Heartbeat>();
        const msg: StreamMessage = { seq: m.seq, change: m.subject === HEARTBEAT_SUBJECT ? null : (body as Change) };
        applier.apply([msg]);
        if (lastError !== null) logger.info('replication following again', { appliedSeq: m.seq });
        lastError = null;
        if (m.subject === HEARTBEAT_SUBJECT && m.info.pending === 0) {
          const at = Math.min(deps.now(), (body as Heartbeat).hb);
          caughtUpAt = Math.max(caughtUpAt ?? at, at);
        }
        if (stopped) break;
      }
    } finally {
      clearInterval(watchdog);
      current = null;
    }
    if (!stopped) throw new Error(`no message for ${STALL_MS} ms`);
  }

  const loop = (async () => {
    while (!stopped) {
      try {
        await follow();
      } catch (err) {
        if (stopped) break;
        const message = (err as Error).message;
        if (lastError === null)
          logger.warn('replication follow failed; serving the local copy within its lag bound', { reason: message });
        lastError = message;
        link.drop(err);
        await new Promise<void>((resolve) => {
          retry = { timer: setTimeout(resolve, RETRY_MS), resolve };
        });
        retry = null;
      }
    }
  })();

  return {
    lagMs,
    status: () => ({ nats: link.state(), appliedSeq: applier.appliedSeq(), lagMs: lagMs(), lastError }),
    async stop() {
      stopped = true;
      const r = retry as { timer: NodeJS.Timeout; resolve(): void } | null;
      if (r) {
        clearTimeout(r.timer);
        r.resolve();
      }
      current?.stop();
      await loop;
    },
  };
}
