import { createRequire } from 'node:module';

/**
 * A local S3-compatible server for Litestream's s3 replica: s3rver 3.7.1 (npm), on 127.0.0.1, its
 * objects in a directory, path-style requests, SigV4 checked against a key pair of our choosing.
 *
 * One correction, and only one: s3rver's filesystem store answers a ListObjects with a delimiter
 * without the CommonPrefixes of keys two or more levels below the prefix (its walk stops at the
 * first directory under a common prefix, before it reaches an object). S3 rolls every such key up
 * into its common prefix. Litestream finds generations that way (prefix `<path>/generations/`,
 * delimiter `/`, while its objects sit at `generations/<id>/wal/<file>`), so against s3rver as
 * shipped every restore and `litestream generations` says "no matching backups found" although
 * the uploads are all there. The correction lists without the delimiter through s3rver's own
 * store and rolls keys up as S3 does; uploads, downloads, signatures and storage stay s3rver's.
 */
type S3Object = { key: string };
type Listing = { objects: S3Object[]; commonPrefixes: string[]; isTruncated: boolean };
type ListOptions = { delimiter?: string; prefix?: string; startAfter?: string; maxKeys?: number };
type Store = { listObjects(bucket: string, options: ListOptions): Promise<Listing> };
type S3rverInstance = {
  store: Store;
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
};
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
type Account = { createKeyPair(id: string, secret: string): void; revokeAccessKey(id: string): void };

const require = createRequire(import.meta.url);

export type FakeS3 = { endpoint: string; close(): Promise<void> };

export async function startFakeS3(o: {
  directory: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}): Promise<FakeS3> {
  const S3rver = require('s3rver') as S3rverClass;
  const account = (require('s3rver/lib/models/account') as { DUMMY_ACCOUNT: Account }).DUMMY_ACCOUNT;
  account.createKeyPair(o.accessKeyId, o.secretAccessKey);
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: o.directory,
    vhostBuckets: false,
    configureBuckets: [{ name: o.bucket, configs: [] }],
  });
  const store = server.store;
  const list = store.listObjects.bind(store);
  store.listObjects = async (bucket, options) => {
    const delimiter = options.delimiter ?? '';
    if (!delimiter) return list(bucket, options);
    const prefix = options.prefix ?? '';
    const all = await list(bucket, { ...options, delimiter: '', maxKeys: Number.POSITIVE_INFINITY });
    const prefixes = new Set<string>();
    const objects: S3Object[] = [];
    for (const obj of all.objects) {
      const at = obj.key.slice(prefix.length).indexOf(delimiter);
      if (at === -1) objects.push(obj);
      else prefixes.add(obj.key.slice(0, prefix.length + at + delimiter.length));
    }
    const max = options.maxKeys ?? Number.POSITIVE_INFINITY;
    return { objects: objects.slice(0, max), commonPrefixes: [...prefixes].sort(), isTruncated: objects.length > max };
  };
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      await server.close();
      account.revokeAccessKey(o.accessKeyId);
    },
  };
}
