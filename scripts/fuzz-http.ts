import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../test/chaos/server.ts';
import { runHttpFuzz } from '../test/fuzz/http-fuzz.ts';

/**
 * `npm run fuzz [-- --count N --seed S]`: seeded malformed requests across every route against a
 * real server process (mock payments, simulated feed). Exit 1 on any 5xx, any JSON object without
 * `disclaimer`, or a dead server afterwards.
 */
const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '20260715' },
    concurrency: { type: 'string', default: '8' },
  },
});
const count = Number(values.count);
const seed = Number(values.seed);
const dataDir = mkdtempSync(join(tmpdir(), 'isocast-fuzz-'));
const server = await startServer({ dataDir, env: { PAYMENT_MODE: 'mock', FEED: 'sim', LOG_LEVEL: 'error' } });
const started = Date.now();
let ok = false;
try {
  const stats = await runHttpFuzz({
    baseUrl: server.baseUrl,
    count,
    seed,
    concurrency: Number(values.concurrency),
    onProgress: (n) => {
      if (n % 5000 === 0) process.stdout.write(`  ${n} requests\n`);
    },
  });
  const alive =
    (await fetch(`${server.baseUrl}/health`).then(
      (r) => r.status,
      () => 0,
    )) === 200;
  process.stdout.write(
    `isocast HTTP fuzz: ${stats.requests} requests, seed ${seed}, ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  process.stdout.write(`by kind:   ${JSON.stringify(stats.byKind)}\n`);
  process.stdout.write(`by status: ${JSON.stringify(stats.byStatus)}\n`);
  process.stdout.write(
    `JSON objects checked for disclaimer: ${stats.jsonObjects}; connections cut by the server (413/431 mid-upload): ${stats.transportErrors}\n`,
  );
  process.stdout.write(
    `5xx: ${stats.serverErrors.length}; JSON objects without disclaimer: ${stats.missingDisclaimer.length}; server alive afterwards: ${alive}\n`,
  );
  for (const line of [...stats.serverErrors, ...stats.missingDisclaimer].slice(0, 10))
    process.stdout.write(`  ${line}\n`);
  ok = alive && stats.serverErrors.length === 0 && stats.missingDisclaimer.length === 0;
} finally {
  await server.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
