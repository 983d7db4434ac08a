/** For Litestream 0.3.13; secrets go into the 0600 YAML file only, never a log or a command line. */
export type ReplicationInput = {
  REPLICA_URL?: string;
  REPLICA_SYNC_INTERVAL_MS: number;
  REPLICA_ENDPOINT?: string;
  REPLICA_REGION?: string;
  REPLICA_ACCESS_KEY_ID?: string;
  REPLICA_SECRET_ACCESS_KEY?: string;
  REPLICA_SFTP_KEY_PATH?: string;
  LITESTREAM_BIN?: string | undefined;
};

/** Litestream's WAL monitor; the sync interval is REPLICA_SYNC_INTERVAL_MS minus it, so a commit's upload starts within REPLICA_SYNC_INTERVAL_MS. */
const MONITOR_INTERVAL_MS = 100;
/** Full snapshots this often bound a restore to replaying at most this much WAL. */
const SNAPSHOT_INTERVAL = '6h';
const RETENTION = '72h'; // how far back `restore --timestamp` can go
/** Litestream checkpoints alone while it runs (db/checkpointer.ts): PASSIVE from 4 MiB, RESTART from 40 MiB, PASSIVE after a quiet minute. */
const MIN_CHECKPOINT_PAGES = 1_000;
const MAX_CHECKPOINT_PAGES = 10_000;
const CHECKPOINT_INTERVAL = '1m';

function replicaTarget(url: string) {
  if (url.startsWith('/')) return { type: 'file' as const, path: url };
  const u = new URL(url);
  const path = decodeURIComponent(u.pathname);
  if (u.protocol === 'file:') return { type: 'file' as const, path };
  if (u.protocol === 's3:') return { type: 's3' as const, bucket: u.hostname, path: path.replace(/^\/+/, '') };
  return {
    type: 'sftp' as const,
    host: u.port ? `${u.hostname}:${u.port}` : u.hostname,
    user: decodeURIComponent(u.username),
    path,
  };
}

export function replicationProblems(c: ReplicationInput): string[] {
  const out: string[] = [];
  const s3Only = ['REPLICA_ENDPOINT', 'REPLICA_REGION', 'REPLICA_ACCESS_KEY_ID', 'REPLICA_SECRET_ACCESS_KEY'] as const;
  if (!c.REPLICA_URL) {
    for (const k of [...s3Only, 'REPLICA_SFTP_KEY_PATH'] as const)
      if (c[k] !== undefined) out.push(`${k}: set without REPLICA_URL`);
    return out;
  }
  const t = replicaTarget(c.REPLICA_URL);
  if (t.type !== 's3') for (const k of s3Only) if (c[k] !== undefined) out.push(`${k}: only for s3:// replicas`);
  if (t.type !== 'sftp' && c.REPLICA_SFTP_KEY_PATH !== undefined)
    out.push('REPLICA_SFTP_KEY_PATH: only for sftp:// replicas');
  if (t.type === 'sftp' && !c.REPLICA_SFTP_KEY_PATH)
    out.push('REPLICA_SFTP_KEY_PATH: required for sftp:// replicas (key authentication)');
  if (t.type === 'sftp' && !t.user) out.push('REPLICA_URL: an sftp:// replica names its user: sftp://user@host/path');
  if ((c.REPLICA_ACCESS_KEY_ID === undefined) !== (c.REPLICA_SECRET_ACCESS_KEY === undefined))
    out.push('REPLICA_ACCESS_KEY_ID and REPLICA_SECRET_ACCESS_KEY: set both or neither');
  return out;
}

/** The replica as it may be printed: where it is, never a credential. */
export function describeReplica(c: ReplicationInput): string {
  if (!c.REPLICA_URL) return 'off';
  const t = replicaTarget(c.REPLICA_URL);
  if (t.type === 'file') return `file ${t.path}`;
  if (t.type === 'sftp') return `sftp ${t.user}@${t.host}:${t.path}`;
  const where = c.REPLICA_ENDPOINT ? ` via ${new URL(c.REPLICA_ENDPOINT).host}` : '';
  return `s3 ${t.bucket}/${t.path}${where}`;
}

/** A YAML string: JSON's double-quoted form is valid YAML and escapes everything that matters. */
const q = (s: string) => JSON.stringify(s);

/** With -no-expand-env a `$` in a secret stays a `$`; JSON logs on stdout, which the supervisor folds. */
export function litestreamYaml(dbPath: string, c: ReplicationInput): string {
  if (!c.REPLICA_URL) throw new Error('REPLICA_URL is not set');
  const { type, ...where } = replicaTarget(c.REPLICA_URL);
  const syncMs = Math.max(MONITOR_INTERVAL_MS, c.REPLICA_SYNC_INTERVAL_MS - MONITOR_INTERVAL_MS);
  const s3 = (v: string | undefined) => (type === 's3' && v ? v : undefined);
  // In Litestream's order; a field without a value is left out.
  const fields: [string, string | undefined][] = [
    ['type', type],
    ...Object.entries(where).map(([k, v]): [string, string] => [k, q(v)]),
    ['endpoint', s3(c.REPLICA_ENDPOINT) && q(c.REPLICA_ENDPOINT!)],
    ['force-path-style', s3(c.REPLICA_ENDPOINT) && 'true'],
    ['region', s3(c.REPLICA_REGION) && q(c.REPLICA_REGION!)],
    ['access-key-id', s3(c.REPLICA_ACCESS_KEY_ID) && q(c.REPLICA_ACCESS_KEY_ID!)],
    ['secret-access-key', s3(c.REPLICA_SECRET_ACCESS_KEY) && q(c.REPLICA_SECRET_ACCESS_KEY!)],
    ['key-path', type === 'sftp' ? q(c.REPLICA_SFTP_KEY_PATH ?? '') : undefined],
    ['sync-interval', `${syncMs}ms`],
    ['snapshot-interval', SNAPSHOT_INTERVAL],
    ['retention', RETENTION],
  ];
  return [
    '# Written by isocast (src/replication/settings.ts) at every start; edits are overwritten.',
    'logging:',
    '  level: info',
    '  type: json',
    'dbs:',
    `  - path: ${q(dbPath)}`,
    `    monitor-interval: ${MONITOR_INTERVAL_MS}ms`,
    `    checkpoint-interval: ${CHECKPOINT_INTERVAL}`,
    `    min-checkpoint-page-count: ${MIN_CHECKPOINT_PAGES}`,
    `    max-checkpoint-page-count: ${MAX_CHECKPOINT_PAGES}`,
    '    replicas:',
    '      - name: "replica"',
    ...fields.filter(([, v]) => v !== undefined).map(([k, v]) => `        ${k}: ${v}`),
    '',
  ].join('\n');
}
