import type { Logger } from '../lib/logger.ts';
import { linkLoop, type NatsLink } from './nats-link.ts';
import { HEARTBEAT_SUBJECT, subjectOf, type Heartbeat, type ReplicationOutbox } from './tables.ts';

/** At least once, in id order (the msg id is the outbox id: stored once); idle, a heartbeat a second. */
const HEARTBEAT_MS = 1_000;
/** How often an idle publisher looks for a new outbox row (a primary-key read, about 2 µs). */
const IDLE_CHECK_MS = 5;
const BATCH = 256;

export function startPublisher(deps: { link: NatsLink; outbox: ReplicationOutbox; logger: Logger; now: () => number }) {
  const { link, outbox, logger } = deps;
  let wakeUp: (() => void) | null = null;
  let lastPublished: number | null = null;
  let lastHeartbeat = 0;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const seen = outbox.lastId();
      const started = Date.now();
      const check = () => {
        if (run.stopped() || outbox.lastId() !== seen || Date.now() - started >= ms) return done();
        timer = setTimeout(check, IDLE_CHECK_MS);
      };
      const done = () => {
        clearTimeout(timer);
        wakeUp = null;
        resolve();
      };
      let timer = setTimeout(check, IDLE_CHECK_MS);
      wakeUp = done;
    });
  async function once(): Promise<boolean> {
    const nats = await link.ensure();
    outbox.useStream(nats.streamCreated);
    const batch = outbox.next(BATCH);
    if (batch.length > 0) {
      // One connection publishes in order and JetStream stores in that order; the acks come back together.
      await Promise.all(
        batch.map((p) =>
          nats.js.publish(subjectOf(p.change.t, p.change.k), JSON.stringify(p.change), { msgID: `o${p.id}` }),
        ),
      );
      outbox.published(batch[batch.length - 1]!.id);
      lastPublished = deps.now();
      return true;
    }
    if (Date.now() - lastHeartbeat >= HEARTBEAT_MS) {
      const hb: Heartbeat = { hb: deps.now() };
      await nats.js.publish(HEARTBEAT_SUBJECT, JSON.stringify(hb));
      lastHeartbeat = Date.now();
    }
    return false;
  }

  const run = linkLoop(link, {
    logger,
    failed: 'replication publish failed; the outbox keeps every change',
    failFields: () => ({ backlog: outbox.backlog() }),
    wait: pause,
    async step() {
      const more = await once();
      run.ok('replication publishing again', { backlog: outbox.backlog() });
      if (!more) await pause(Math.max(0, HEARTBEAT_MS - (Date.now() - lastHeartbeat)));
    },
  });

  return {
    wake: () => wakeUp?.(),
    status: () => ({
      nats: link.state(),
      backlog: outbox.backlog(),
      lastPublishedAt: lastPublished === null ? null : new Date(lastPublished).toISOString(),
      lastError: run.lastError(),
    }),
    stop: () => run.stop(() => wakeUp?.()),
  };
}
