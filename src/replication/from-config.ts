import { findLitestream, type BinaryLookup } from './binary.ts';
import type { ReplicationInput } from './settings.ts';

export { describeReplica as replicaName } from './settings.ts';

/** The settings replication reads; the server's Config carries them (config.ts). */
export type ReplicaSettings = ReplicationInput & { LITESTREAM_BIN?: string | undefined };

export const replicationSettings = (c: ReplicaSettings): ReplicationInput | null => (c.REPLICA_URL ? c : null);

export const litestreamBinary = (c: ReplicaSettings): BinaryLookup => findLitestream({ configured: c.LITESTREAM_BIN });
