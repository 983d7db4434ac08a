import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from '../../src/app.ts';
import { createStores, type Stores } from '../../src/stores.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDb, type Db } from '../../src/db/open.ts';
import { createCatalog } from '../../src/cities/catalog.ts';
import { manualClock } from './clock.ts';
import { memoryLogger } from './logger.ts';
import { loadSanctionsList } from '../../src/sanctions/list.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';

/** The fixed server secret tests run with (binding salts, receipts). */
export const TEST_SECRET = Buffer.alloc(32, 0x5e);

/** A temp directory removed when the test ends. */
export function tempDir(t: { after(fn: () => void): void }, prefix = 'isocast-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

type AppDeps = Parameters<typeof createApp>[0];

export type TestEnv = {
  config: Config;
  db: Db;
  /** The stores the app was built with (src/stores.ts), as main.ts shares them. */
  stores: Stores;
  clock: ReturnType<typeof manualClock>;
  logger: ReturnType<typeof memoryLogger>;
  deps: AppDeps;
  app: ReturnType<typeof createApp>;
  dir: string;
};

/**
 * A real app over a real SQLite file in a temp dir, with a hand-moved clock and an in-memory log.
 * `env` overrides configuration variables; `deps` overrides wiring.
 */
export function testApp(
  t: { after(fn: () => void): void },
  opts: { env?: Record<string, string>; nowMs?: number; deps?: Partial<AppDeps> } = {},
): TestEnv {
  const dir = tempDir(t);
  const config = loadConfig({ DATA_DIR: dir, BASE_URL: 'http://127.0.0.1:8402', ...opts.env });
  const db = openDb(join(dir, 'isocast.db'));
  t.after(() => db.close());
  const clock = manualClock(opts.nowMs ?? Date.parse('2026-07-15T15:00:00Z'));
  const logger = memoryLogger();
  const stores = opts.deps?.stores ?? createStores(db);
  const deps: AppDeps = {
    config,
    db,
    stores,
    clock,
    logger,
    catalog: createCatalog(),
    sanctions: loadSanctionsList({ path: config.OFAC_LIST_PATH, extra: config.OFAC_EXTRA }),
    secret: TEST_SECRET,
    settler: createMockSettler(),
    ...opts.deps,
  };
  return { config, db, stores, clock, logger, deps, app: createApp(deps), dir };
}

/** Serves a Hono app on 127.0.0.1 on a free port; closed when the test ends. */
export async function listen(
  t: { after(fn: () => Promise<void> | void): void },
  fetch: (req: Request) => Response | Promise<Response>,
): Promise<string> {
  const server = serve({ fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  // A client still mid-request when the test ends (a browser whose test failed half-way) would
  // hold close() open for good: after a grace period its sockets are cut.
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        setTimeout(() => (server as Server).closeAllConnections(), 2_000).unref();
      }),
  );
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}
