import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { generatePrivateKey } from 'viem/accounts';
import { tempDir } from '../helpers/app.ts';
import { installClientPackage } from '../helpers/client-package.ts';
import { compileCacheEnv } from '../helpers/child-env.ts';

/**
 * The README's code cannot rot (issue 27.5): each snippet is a file under examples/, the README
 * shows that file byte for byte (after an `<!-- example: <path> -->` marker), and each file runs
 * against a real mock-mode server on 127.0.0.1 with a throwaway key. x402-fetch.ts imports
 * `@isocast/client` by name, so it runs as a buyer runs it: in a project where the packed
 * package is installed (test/helpers/client-package.ts).
 */
function readmeExamples(): Map<string, string> {
  const text = readFileSync('README.md', 'utf8');
  const out = new Map<string, string>();
  for (const m of text.matchAll(/<!-- example: (\S+) [^\n]*-->\n```\w*\n([\s\S]*?)```\n/g)) out.set(m[1]!, m[2]!);
  return out;
}

test('the README shows every example file exactly as it is', () => {
  const shown = readmeExamples();
  const files = readdirSync('examples').map((f) => `examples/${f}`);
  assert.deepEqual([...shown.keys()].sort(), files.sort(), 'every example is in the README, and only those');
  for (const [path, body] of shown)
    assert.equal(body, readFileSync(path, 'utf8'), `${path} and its README copy differ`);
});

test('every example runs against a local mock-mode instance', async (t) => {
  const data = join(tempDir(t), 'data');
  const server = spawn(process.execPath, ['src/main.ts', 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      ...compileCacheEnv(),
      PORT: '0',
      DATA_DIR: data,
      POLL_INTERVAL_MS: '500',
      SIM_SPEED: '600',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => {
    if (server.exitCode === null) server.kill('SIGKILL');
  });
  const base = await new Promise<string>((resolve, reject) => {
    let err = '';
    server.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      const m = /isocast listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    server.once('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  const env = {
    PATH: process.env.PATH ?? '',
    ...compileCacheEnv(),
    ISOCAST_SERVER: base,
    ISOCAST_KEY: generatePrivateKey(),
    CITY: 'nyc',
  };
  const run = (cmd: string, args: string[], more: Record<string, string> = {}) =>
    spawnSync(cmd, args, { env: { ...env, ...more }, encoding: 'utf8', timeout: 240_000 });
  const quickStart = (more: Record<string, string> = {}) => run('/bin/sh', ['examples/quick-start.sh'], more);
  const assertQuickStart = (r: ReturnType<typeof quickStart>) => {
    assert.equal(r.status, 0, r.stderr);
    const [cities, sample, ...rest] = r.stdout.trim().split('\n');
    assert.deepEqual(rest, []);
    // The spec's 37 daily-high cities; their daily-low streams are listed only with ?kind=low.
    const listed = JSON.parse(cities!) as { count: number; cities: { kind: string; latestSeq: number }[] };
    assert.equal(listed.count, 37);
    assert.equal(listed.cities.filter((c) => c.kind === 'high').length, 37);
    const shown = JSON.parse(sample!) as { city: string; seq: number; disclaimer: string };
    assert.ok(shown.disclaimer, 'the sample answered');
    assert.equal(shown.seq, 1, 'a real first signal, not the synthetic example');
  };

  // A fresh start (issue 38 item 2): right after "listening" no city has crossed twice (a day's
  // first reading is a baseline, so a second signal needs three polls). With no time to wait the
  // quick start says what it waited for and what to do next, prints the list, and requests no
  // sample (it used to ask for `/v1/sample?city=none yet`).
  const early = quickStart({ ISOCAST_WAIT: '0' });
  assert.equal(early.status, 1, early.stderr);
  assert.match(
    early.stderr,
    /^waiting for a city with latestSeq >= 2 \(up to 0 s\)\.\.\.\nno city has latestSeq >= 2 yet \(a fresh npm start has one within about 3 minutes\): run this again, or set ISOCAST_WAIT=600\n$/,
  );
  assert.equal((JSON.parse(early.stdout) as { count: number }).count, 37);
  // With the default bound it waits on the same fresh start (the list is cached 30 s, so about
  // that long), saying so once on stderr, then prints the list and a city's first signal.
  const fresh = quickStart();
  assert.match(fresh.stderr, /^(waiting for a city with latestSeq >= 2 \(up to 200 s\)\.\.\.\n)?$/);
  assertQuickStart(fresh);
  // Nothing listening: the same bounded wait, then the plain next step.
  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
  const nobody = quickStart({ ISOCAST_SERVER: `http://127.0.0.1:${closed}`, ISOCAST_WAIT: '0' });
  assert.equal(nobody.status, 1);
  assert.equal(nobody.stdout, '');
  assert.match(nobody.stderr, /nothing answered at http:\/\/127\.0\.0\.1:\d+ within 0 s: start it with npm start/);
  assert.equal(quickStart({ ISOCAST_WAIT: 'soon' }).status, 2);

  const { project } = installClientPackage(t);
  copyFileSync('examples/x402-fetch.ts', join(project, 'x402-fetch.ts'));
  const fetchRun = run(process.execPath, [join(project, 'x402-fetch.ts')]);
  assert.equal(fetchRun.status, 0, fetchRun.stderr);
  assert.match(
    fetchRun.stdout,
    /^bought 20 nyc signals, entitled through seq \d+\nread \d+ signal\(s\); latest seq \d+\n$/,
  );

  // A stock x402 client with nothing of ours registered (issue 36): the standard exact scheme pays.
  const stockRun = run(process.execPath, ['examples/stock-x402-fetch.ts']);
  assert.equal(stockRun.status, 0, stockRun.stderr);
  assert.match(
    stockRun.stdout,
    /^HTTP 200: read \d+ signal\(s\), entitled through seq \d+\nHTTP 200: bought 20 more, entitled through seq \d+\n$/,
  );

  const viemRun = run(process.execPath, ['examples/viem.ts']);
  assert.equal(viemRun.status, 0, viemRun.stderr);
  assert.match(viemRun.stdout, /^HTTP 200: bought 20 nyc signals, entitled through seq \d+\n/);
  assert.match(viemRun.stdout, /\d+ signal\(s\); latest seq \d+\n$/);

  // Warm: a city has crossed twice, so the quick start answers at once and says nothing on stderr.
  const warm = quickStart();
  assert.equal(warm.stderr, '');
  assertQuickStart(warm);
});
