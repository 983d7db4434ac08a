import { findLitestream, type BinaryLookup } from './binary.ts';
import { describeReplica, type ReplicationInput } from './settings.ts';

/** The settings replication reads; the server's Config carries them (config.ts). */
export type ReplicaSettings = ReplicationInput & { LITESTREAM_BIN?: string | undefined };

/** The replication settings of a configuration, or null when REPLICA_URL is unset (off). */
export function replicationSettings(config: ReplicaSettings): ReplicationInput | null {
  if (!config.REPLICA_URL) return null;
  return {
    REPLICA_URL: config.REPLICA_URL,
    REPLICA_SYNC_INTERVAL_MS: config.REPLICA_SYNC_INTERVAL_MS,
    REPLICA_ENDPOINT: config.REPLICA_ENDPOINT,
    REPLICA_REGION: config.REPLICA_REGION,
    REPLICA_ACCESS_KEY_ID: config.REPLICA_ACCESS_KEY_ID,
    REPLICA_SECRET_ACCESS_KEY: config.REPLICA_SECRET_ACCESS_KEY,
    REPLICA_SFTP_KEY_PATH: config.REPLICA_SFTP_KEY_PATH,
  };
}

export function litestreamBinary(config: ReplicaSettings): BinaryLookup {
  return findLitestream({ configured: config.LITESTREAM_BIN });
}

export function replicaName(config: ReplicaSettings): string {
  return describeReplica(config);
}
