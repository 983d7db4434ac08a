import type { NatsConnection } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { SIGNED_REQUEST_SKEW_SEC } from '../lib/signed-request.ts';
import { SINGLE_USE_BUCKET, STREAM, SUBJECT_ROOT } from './tables.ts';

/**
 * The client packages are imported on the first connect, so a single node never loads them (the
 * start-up bench). Only what nats-server 2.9 (Debian 12) has is used: one stream, ordered pull
 * consumers started at a sequence, a key-value bucket with the bucket's age limit (per-key TTLs are 2.11).
 */
export type Nats = {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** The stream's creation time: a reader or the primary that finds another one starts over. */
  streamCreated: string;
  singleUse: KV;
};

/** How long a connect or a JetStream request may take before it counts as NATS being down. */
const NATS_TIMEOUT_MS = 2_000;

export async function connectNats(url: string, name: string): Promise<Nats> {
  const { connect, jetstream, jetstreamManager, Kvm } = await import('./nats-modules.ts');
  const nc = await connect({
    servers: url,
    name,
    timeout: NATS_TIMEOUT_MS,
    // The client reconnects on its own; a message published while it is away fails its ack and
    // stays in the outbox, so nothing relies on the client buffering it.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
  });
  try {
    const jsm = await jetstreamManager(nc, { timeout: NATS_TIMEOUT_MS });
    const js = jetstream(nc, { timeout: NATS_TIMEOUT_MS });
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
