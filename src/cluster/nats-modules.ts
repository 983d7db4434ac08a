/**
 * The NATS client packages, as one entry: `nats-client.ts` imports this file with a dynamic
 * `import()` only when NATS_URL is set, and the binary carries it as an asset bundle of its own
 * (scripts/sea/asset-bundles.ts), so a single node never evaluates the client.
 */
export { connect } from '@nats-io/transport-node';
export { jetstream, jetstreamManager } from '@nats-io/jetstream';
export { Kvm } from '@nats-io/kv';
