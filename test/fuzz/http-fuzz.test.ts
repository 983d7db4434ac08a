import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../chaos/server.ts';
import { runHttpFuzz } from './http-fuzz.ts';

/**
 * Seeded malformed requests across every route against a real server process: no 5xx, the process
 * stays up, every JSON object carries `disclaimer`, and the size limits answer 413 / 431. 5,000
 * here keep the suite quick on 2 cores (about 6 s); `npm run fuzz` sends the full 10,000.
 */
const COUNT = 5_000;

test(`HTTP fuzz: ${COUNT} malformed requests, zero 5xx, server alive, disclaimer everywhere`, {
  timeout: 120_000,
}, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'isocast-fuzz-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer({ dataDir, env: { PAYMENT_MODE: 'mock', FEED: 'sim', LOG_LEVEL: 'error' } });
  t.after(() => server.kill('SIGKILL'));

  const stats = await runHttpFuzz({ baseUrl: server.baseUrl, count: COUNT, seed: 20_260_715, concurrency: 8 });
  assert.equal(stats.requests, COUNT);
  assert.deepEqual(stats.serverErrors, []);
  assert.deepEqual(stats.missingDisclaimer, []);
  assert.ok((stats.byStatus['413'] ?? 0) > 0, 'oversized bodies answered 413');
  assert.ok((stats.byStatus['431'] ?? 0) > 0, 'huge headers answered 431');
  assert.ok(stats.jsonObjects > COUNT / 2);
  const health = await fetch(`${server.baseUrl}/health`);
  assert.equal(health.status, 200, 'the server is alive after the fuzz');
  t.diagnostic(
    `statuses ${JSON.stringify(stats.byStatus)}; kinds ${JSON.stringify(stats.byKind)}; transport errors ${stats.transportErrors}`,
  );
});
