import { findLitestream, type BinaryLookup } from './binary.ts';
import { describeReplica, type ReplicationInput } from './settings.ts';

/** The settings replication reads; the server's Config carries them (config.ts). */
export type ReplicaSettings = ReplicationInput & { LITESTREAM_BIN?: string | undefined };

/** The replication settings of a configuration, or null when REPLICA_URL is unset (off). */
export function replicationSettings(config: ReplicaSettings): ReplicationInput | null {
  return config.REPLICA_URL ? config : null;
}

export function litestreamBinary(config: ReplicaSettings): BinaryLookup {
  return findLitestream({ configured: config.LITESTREAM_BIN });
}

export function replicaName(config: ReplicaSettings): string {
  return describeReplica(config);
}
