import type { Logger } from '../lib/logger.ts';
import { linkLoop, type NatsLink } from './nats-link.ts';
import { HEARTBEAT_SUBJECT, STREAM, type Applier, type Change, type Heartbeat, type StreamMessage } from './tables.ts';

/** A heartbeat applied as the stream's last message means this copy held all the primary had: that is the lag. */
/** No message at all (the primary heartbeats every second) for this long: rebuild the consumer. */
const STALL_MS = 5_000;

export function startFollower(deps: { link: NatsLink; applier: Applier; logger: Logger; now: () => number }) {
  const { link, applier, logger } = deps;
  let caughtUpAt: number | null = null;
  let current: { stop(): void } | null = null;

  /** ms behind the primary, or null before the first heartbeat that found this copy current. */
  const lagMs = () => (caughtUpAt === null ? null : Math.max(0, deps.now() - caughtUpAt));

  async function follow(): Promise<void> {
    const nats = await link.ensure();
    const was = applier.useStream(nats.streamCreated);
    if (was !== null) logger.warn('replication stream was recreated; replaying it from the start', { was });
    const consumer = await nats.js.consumers.get(STREAM, {
      deliver_policy: 'by_start_sequence' as never,
      opt_start_seq: applier.appliedSeq() + 1,
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
        run.ok('replication following again', { appliedSeq: m.seq });
        if (m.subject === HEARTBEAT_SUBJECT && m.info.pending === 0) {
          const at = Math.min(deps.now(), (body as Heartbeat).hb);
          caughtUpAt = Math.max(caughtUpAt ?? at, at);
        }
        if (run.stopped()) break;
      }
    } finally {
      clearInterval(watchdog);
      current = null;
    }
    if (!run.stopped()) throw new Error(`no message for ${STALL_MS} ms`);
  }

  const run = linkLoop(link, {
    logger,
    failed: 'replication follow failed; serving the local copy within its lag bound',
    step: follow,
  });

  return {
    lagMs,
    status: () => ({
      nats: link.state(),
      appliedSeq: applier.appliedSeq(),
      lagMs: lagMs(),
      lastError: run.lastError(),
    }),
    stop: () => run.stop(() => current?.stop()),
  };
}
