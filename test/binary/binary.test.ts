import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createSIWxPayload, encodeSIWxHeader, type SIWxExtension } from '@x402/extensions/sign-in-with-x';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { tempDir } from '../helpers/app.ts';
import { addonPath, BINARY, ROOT } from '../../scripts/build-binary.ts';
import { addonHash } from '../../src/lib/native-addon.ts';
import { SCHEMA_VERSION } from '../../src/db/migrate.ts';
import { loadPrebuiltAddon, secp256k1AddonCandidates } from '../../src/lib/secp256k1.ts';
import { VERSION } from '../../src/version.ts';

const run = promisify(execFile);

/**
 * The single binary end to end: built (or reused when nothing changed since the last build),
 * copied alone into an empty directory so no node_modules or project file can help it, then run
 * as a user would.
 */
test('single binary: version, serve from an empty directory, clean SIGTERM', { timeout: 600_000 }, async (t) => {
  await run(process.execPath, [join(ROOT, 'scripts', 'build-binary.ts'), '--if-stale'], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });

  const dir = tempDir(t, 'isocast-binary-');
  const bin = join(dir, 'isocast');
  copyFileSync(BINARY, bin);
  assert.deepEqual(readdirSync(dir), ['isocast']);
  // HOME and XDG_CACHE_HOME inside the temp dir: the addon cache is created there and removed.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, XDG_CACHE_HOME: join(dir, 'cache') };

  await t.test('--version and --help are answered by the binary itself', async () => {
    const v = await run(bin, ['--version'], { cwd: dir, env });
    assert.equal(v.stdout, `isocast ${VERSION}\n`);
    const h = await run(bin, ['--help'], { cwd: dir, env });
    assert.match(h.stdout, /^Usage: isocast <command>/m);
  });

  await t.test('migrate writes the schema into an explicit DATA_DIR', async () => {
    const dataDir = join(dir, 'explicit-data');
    const m = await run(bin, ['migrate'], { cwd: dir, env: { ...env, DATA_DIR: dataDir } });
    assert.equal(m.stdout, `schema at version ${SCHEMA_VERSION} in ${join(dataDir, 'isocast.db')}\n`);
  });

  await t.test('serve answers /health and /v1/cities, and stops cleanly on SIGTERM', async () => {
    // No DATA_DIR: the default ./data must land under the working directory.
    const child = spawn(bin, ['serve'], {
      cwd: dir,
      env: { ...env, HOST: '127.0.0.1', PORT: '0', ADMIN_TOKEN: ADMIN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const output = collect(child);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );

    const port = await listeningPort(child, output);
    const base = `http://127.0.0.1:${port}`;

    const health = await fetch(`${base}/health`);
    assert.equal(health.status, 200);
    const h = (await health.json()) as { ok: boolean; service: string; disclaimer: string };
    assert.equal(h.service, 'isocast-api');
    assert.equal(h.ok, true);
    assert.equal(typeof h.disclaimer, 'string');

    // Without a query the spec's list: the 37 daily-high cities; ?kind=all adds their daily-low streams.
    const spec = (await (await fetch(`${base}/v1/cities`)).json()) as { count: number };
    assert.equal(spec.count, 37);
    const cities = await fetch(`${base}/v1/cities?kind=all`);
    assert.equal(cities.status, 200);
    const c = (await cities.json()) as { count: number; cities: { slug: string; kind: string }[] };
    assert.equal(c.count, 74);
    assert.deepEqual(
      [c.cities.filter((x) => x.kind === 'high').length, c.cities.filter((x) => x.kind === 'low').length],
      [37, 37],
    );
    assert.equal(c.cities[0]!.slug, 'nyc');
    assert.equal(c.cities[37]!.slug, 'nyc-low');

    // public/ files are SEA assets too, and the OpenAPI document exercises the bundled zod.
    const page = await fetch(`${base}/api`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/i);
    const openapi = await fetch(`${base}/openapi.json`);
    assert.equal(openapi.status, 200);
    assert.match(((await openapi.json()) as { openapi: string }).openapi, /^3\./);

    // A paid subscribe (mock settlement, real signature recovery): the recovery runs on
    // libsecp256k1's N-API addon embedded as a SEA asset, extracted to the cache on first use
    // (not at start); had neither it nor the embedded WASM loaded, the fallback says so.
    assert.deepEqual(cachedAddons(dir), ['better_sqlite3.node']);
    const buyer = privateKeyToAccount(keccak256(toHex('isocast-binary-buyer')));
    const subscribeUrl = `${base}/v1/subscribe?city=nyc&count=5`;
    const challenge = await (await fetch(subscribeUrl, { method: 'POST' })).json();
    const bought = await fetch(subscribeUrl, {
      method: 'POST',
      headers: { 'x-payment': (await payFor402(challenge, buyer)).xPayment },
    });
    assert.equal(bought.status, 200, await bought.clone().text());
    const purchase = (await bought.json()) as { idempotent: boolean; receiptToken: string };
    assert.equal(purchase.idempotent, false);
    assert.match(purchase.receiptToken, /./);
    assert.ok(!output.text().includes('libsecp256k1 unavailable'), output.text());
    // Without a prebuild for this platform the build embeds none and the WASM recovers.
    if (secpPrebuild) {
      assert.deepEqual(cachedAddons(dir), ['better_sqlite3.node', 'secp256k1.node']);
      const extracted = join(dir, 'cache', 'isocast', addonHash(readFileSync(secpPrebuild)), 'secp256k1.node');
      assert.ok(readFileSync(extracted).equals(readFileSync(secpPrebuild)));
    }
    // On a machine with a spare core the recovery ran on a worker thread built from a source
    // string with the module the SEA asset compiled to; had it not started, the pool says so.
    assert.ok(!output.text().includes('signature recovery worker unavailable'), output.text());

    // The buyer signs in instead of paying again: SIGN-IN-WITH-X is parsed and verified by a
    // bundle of its own (siwx-verify.cjs), evaluated at this first sign-in, never at start.
    const readUrl = `${base}/v1/signals?city=nyc`;
    const offered = await fetch(readUrl);
    assert.equal(offered.status, 402);
    const info = (
      decodePaymentRequiredHeader(offered.headers.get('payment-required')!).extensions![
        'sign-in-with-x'
      ] as SIWxExtension
    ).info;
    const signIn = encodeSIWxHeader(
      // PORT=0 leaves BASE_URL at localhost:0: the sign-in names that server, as its 402 says.
      await createSIWxPayload({ ...info, chainId: 'eip155:8453', type: 'eip191' }, buyer, info.uri),
    );
    const read = await fetch(readUrl, { headers: { 'sign-in-with-x': signIn } });
    assert.equal(read.status, 200, await read.clone().text());
    const forged = await fetch(readUrl, { headers: { 'sign-in-with-x': 'not base64 json' } });
    assert.equal(forged.status, 401);

    // WAL checkpoints run on a worker thread whose code is a SEA asset of its own: the purchase's
    // frames are copied into the database file by that thread (src/db/checkpointer.ts).
    const metricsText = async () =>
      (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    const deadline = Date.now() + 10_000;
    let m = await metricsText();
    while (!/^isocast_sqlite_checkpoints_total [1-9]/m.test(m) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      m = await metricsText();
    }
    assert.match(m, /^isocast_sqlite_checkpoints_total [1-9]/m, output.text());
    assert.ok(!output.text().includes('checkpoint thread'), output.text());

    // The buyer's client and replay are a bundle of their own inside the binary, evaluated only
    // when one of them runs (scripts/sea/asset-bundles.ts): the binary buys from itself, reads,
    // and replays a day from a file, with nothing beside it.
    const cli = (args: string[]) =>
      run(bin, args, {
        cwd: dir,
        env: { ...env, ISOCAST_KEY: keccak256(toHex('isocast-binary-cli')), XDG_STATE_HOME: join(dir, 'state') },
      });
    const cliBought = await cli(['buy', '--city', 'chicago', '--count', '2', '--server', base, '--json']);
    // The ceiling is max(P, latest) + 2: the simulated feed may have stored chicago's first signal
    // before the purchase, so the figure is 2 or more, and the read names the same one.
    const through = JSON.parse(cliBought.stdout).paidThroughSeq as number;
    assert.ok(Number.isInteger(through) && through >= 2, cliBought.stdout + cliBought.stderr);
    const cliRead = await cli(['read', '--city', 'chicago', '--server', base]);
    assert.match(cliRead.stderr, new RegExp(`entitled through seq ${through}\\b`));
    const day = join(dir, 'day.csv');
    writeFileSync(day, 'time,temp,unit\n2026-07-01T14:00:00Z,80,F\n2026-07-01T18:00:00Z,84,F\n');
    const replayed = await cli([
      'replay',
      '--city',
      'nyc',
      '--date',
      '2026-07-01',
      '--observations',
      day,
      '--buckets',
      '79°F or below,80-81°F,82-83°F,84°F or higher',
      '--json',
    ]);
    const r = JSON.parse(replayed.stdout) as { signals: unknown[]; final: { bucket: string } };
    assert.equal(r.final.bucket, '84°F or higher', replayed.stderr);
    assert.equal(r.signals.length, 1);

    child.kill('SIGTERM');
    const end = await exited;
    assert.deepEqual(end, { code: 0, signal: null }, output.text());
    assert.ok(existsSync(join(dir, 'data', 'isocast.db')), 'database file under the default DATA_DIR');
    assert.ok(
      output.lines().some((l) => l.msg === 'stopped'),
      output.text(),
    );
    // The addon went to the per-hash cache, not next to the binary or into the data dir.
    // Keyed by the hash the build computed (the same function over the same addon bytes).
    assert.ok(existsSync(join(dir, 'cache', 'isocast', addonHash(readFileSync(addonPath())), 'better_sqlite3.node')));
  });
});

const ADMIN = 'binary-test-admin-token-0123456789abcdef';
/** The prebuild the build embeds: the one that loads on this machine. */
const secpPrebuild = secp256k1AddonCandidates().length ? loadPrebuiltAddon().file : undefined;

/** The addons extracted to the binary's cache so far, by file name. */
function cachedAddons(dir: string): string[] {
  const root = join(dir, 'cache', 'isocast');
  return readdirSync(root)
    .flatMap((h) => readdirSync(join(root, h)))
    .sort();
}

type Output = { text(): string; lines(): Record<string, unknown>[]; onLine(fn: () => void): void };

function collect(child: ChildProcess): Output {
  let text = '';
  const listeners: (() => void)[] = [];
  const add = (chunk: Buffer) => {
    text += chunk.toString();
    for (const fn of listeners) fn();
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  return {
    text: () => text,
    lines: () =>
      text.split('\n').flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    onLine: (fn) => {
      listeners.push(fn);
    },
  };
}

/** The port comes from the service's own `listening` log line (it was started on port 0). */
function listeningPort(child: ChildProcess, output: Output): Promise<number> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const line = output.lines().find((l) => l.msg === 'listening');
      if (line && typeof line.port === 'number') resolve(line.port);
    };
    output.onLine(check);
    child.once('exit', (code, signal) =>
      reject(new Error(`binary exited before listening (code ${code}, signal ${signal}):\n${output.text()}`)),
    );
    check();
  });
}
