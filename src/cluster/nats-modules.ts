/** The NATS client as one entry, imported only with NATS_URL: an asset bundle of its own in the binary (scripts/sea/asset-bundles.ts). */
export { connect } from '@nats-io/transport-node';
export { jetstream, jetstreamManager } from '@nats-io/jetstream';
export { Kvm } from '@nats-io/kv';
