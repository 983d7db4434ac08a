import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../lib/logger.ts';
import type { JetStreamManager } from '@nats-io/jetstream';
import { SIGNED_REQUEST_SKEW_SEC } from '../lib/signed-request.ts';
import { SINGLE_USE_BUCKET, STREAM, SUBJECT_ROOT } from './tables.ts';

/** One NATS connection per process; `drop` forgets a failed one, `ensure` builds it again and re-checks the stream. */
export type NatsLink = ReturnType<typeof createNatsLink>;

export function createNatsLink(url: string, deps: { name: string; logger: Logger }) {
  let nats: Nats | null = null;
  let connecting: Promise<Nats> | null = null;
  let up = false;
  let closed = false;
  const watch = async (n: Nats) => {
    for await (const s of n.nc.status()) {
      if (s.type === 'disconnect') up = false;
      if (s.type === 'reconnect') up = true;
    }
  };
  return {
    current: (): Nats | null => (up ? nats : null),
    ensure(): Promise<Nats> {
      if (nats) return Promise.resolve(nats);
      if (closed) return Promise.reject(new Error('NATS link closed'));
      connecting ??= (async () => {
        try {
          const n = await connectNats(url, deps.name);
          nats = n;
          up = true;
          void watch(n);
          deps.logger.info('nats connected', { server: n.nc.getServer(), streamCreated: n.streamCreated });
          return n;
        } finally {
          connecting = null;
        }
      })();
      return connecting;
    },
    drop(reason: unknown) {
      const n = nats;
      nats = null;
      up = false;
      if (n) {
        deps.logger.warn('nats connection dropped', { reason: String((reason as Error)?.message ?? reason) });
        void n.nc.close().catch(() => {});
      }
    },
    async close() {
      closed = true;
      const n = nats;
      nats = null;
      up = false;
      await n?.nc.close().catch(() => {});
    },
    state: () => (up ? 'connected' : 'disconnected'),
  };
}

const RETRY_MS = 1_000;

/** A failed `step` drops the connection, is logged once until `ok`, and waits RETRY_MS before the next. */
export function linkLoop(
  link: NatsLink,
  loop: {
    logger: Logger;
    step(): Promise<void>;
    failed: string;
    failFields?: () => Record<string, unknown>;
    wait?: (ms: number) => Promise<void>;
  },
) {
  let stopped = false;
  let lastError: string | null = null;
  const stopping = new AbortController();
  const sleep = (ms: number) => delay(ms, undefined, { signal: stopping.signal }).catch(() => {});
  const done = (async () => {
    while (!stopped) {
      try {
        await loop.step();
      } catch (err) {
        if (stopped) break;
        const message = (err as Error).message;
        if (lastError === null) loop.logger.warn(loop.failed, { reason: message, ...loop.failFields?.() });
        lastError = message;
        link.drop(err);
        await (loop.wait ?? sleep)(RETRY_MS);
      }
    }
  })();
  return {
    stopped: () => stopped,
    lastError: () => lastError,
    ok(message: string, fields: Record<string, unknown>) {
      if (lastError !== null) loop.logger.info(message, fields);
      lastError = null;
    },
    async stop(interrupt?: () => void) {
      stopped = true;
      stopping.abort();
      interrupt?.();
      await done;
    },
  };
}

type Nats = Awaited<ReturnType<typeof connectNats>>;

/** How long a connect or a JetStream request may take before it counts as NATS being down. */
const NATS_TIMEOUT_MS = 2_000;

/** Only what nats-server 2.9 (Debian 12) has: one stream, ordered consumers, a bucket-wide age limit. */
async function connectNats(url: string, name: string) {
  const { connect, jetstream, jetstreamManager, Kvm } = await import('./nats-modules.ts');
  const nc = await connect({
    servers: url,
    name,
    timeout: NATS_TIMEOUT_MS,
    // A message published while it reconnects fails its ack and stays in the outbox.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
  });
  try {
    const jsm = await jetstreamManager(nc, { timeout: NATS_TIMEOUT_MS });
    const js = jetstream(nc, { timeout: NATS_TIMEOUT_MS });
    // The stream's creation time: a reader or the primary that finds another one starts over.
    const streamCreated = await ensureStream(jsm);
    // A use must outlive the window in which its signed request is accepted at all (two skews).
    const singleUse = await new Kvm(js).create(SINGLE_USE_BUCKET, {
      history: 1,
      ttl: 2 * SIGNED_REQUEST_SKEW_SEC * 1000,
    });
    return { nc, js, jsm, streamCreated, singleUse };
  } catch (err) {
    await nc.close().catch(() => {});
    throw err;
  }
}

async function ensureStream(jsm: JetStreamManager): Promise<string> {
  try {
    return (await jsm.streams.info(STREAM)).created;
  } catch (err) {
    if (!/not found/i.test((err as Error).message)) throw err;
  }
  try {
    const info = await jsm.streams.add({
      name: STREAM,
      subjects: [`${SUBJECT_ROOT}.>`],
      storage: 'file' as never,
      // The newest state of each row (one subject per row) and deletes: what a reader needs.
      max_msgs_per_subject: 1,
      // The publisher's msg id is the outbox id: a batch re-sent after a crash is stored once.
      duplicate_window: 120_000_000_000,
    });
    return info.created;
  } catch (err) {
    // Another node created it between the two calls.
    if (/already in use|exists/i.test((err as Error).message)) return (await jsm.streams.info(STREAM)).created;
    throw err;
  }
}
