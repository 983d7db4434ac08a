import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatePrivateKey } from 'viem/accounts';
import { tempDir } from '../helpers/app.ts';
import { installClientPackage } from '../helpers/client-package.ts';

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
    env: { PATH: process.env.PATH ?? '', PORT: '0', DATA_DIR: data, POLL_INTERVAL_MS: '500', SIM_SPEED: '600' },
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
  const env = { PATH: process.env.PATH ?? '', ISOCAST_SERVER: base, ISOCAST_KEY: generatePrivateKey(), CITY: 'nyc' };
  const run = (cmd: string, args: string[]) => spawnSync(cmd, args, { env, encoding: 'utf8', timeout: 60_000 });

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

  // As the README says: the quick start's sample needs a city with latestSeq >= 2 (a fresh sim
  // gets there within about 3 minutes; SIM_SPEED above makes it quicker).
  for (let i = 0; i < 180; i++) {
    const list = (await (await fetch(`${base}/v1/cities`)).json()) as { cities: { latestSeq: number }[] };
    if (list.cities.some((c) => c.latestSeq >= 2)) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const quick = run('/bin/sh', ['examples/quick-start.sh']);
  assert.equal(quick.status, 0, quick.stderr);
  const [cities, sample] = quick.stdout.trim().split('\n');
  // The spec's 37 daily-high cities; their daily-low streams are listed only with ?kind=low.
  const listed = JSON.parse(cities!) as { count: number; cities: { kind: string }[] };
  assert.equal(listed.count, 37);
  assert.equal(listed.cities.filter((c) => c.kind === 'high').length, 37);
  assert.ok(JSON.parse(sample!).disclaimer, 'the sample answered');
});
