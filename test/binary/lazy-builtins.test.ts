import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/app.ts';
import { ROOT } from '../../scripts/build-binary.ts';
import { instanceofUses, lazyBuiltins } from '../../scripts/sea/lazy-builtins.ts';

const run = promisify(execFile);

/**
 * node:crypto and node:worker_threads on first use in the binary (scripts/sea/lazy-builtins.ts),
 * bundled the way the binary bundles them: evaluating the bundle loads neither, and every call,
 * `new` on a class and noble's randomness still reach the real modules.
 */
const APP = `
import { createHash, randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { randomBytes as nobleRandom } from '@noble/hashes/utils';
const loaded = () => ({
  crypto: process.moduleLoadList.includes('NativeModule crypto'),
  workers: process.moduleLoadList.includes('NativeModule worker_threads'),
});
const atStart = loaded();
const hash = createHash('sha256').update('abc').digest('hex');
const random = [randomBytes(8).length, nobleRandom(16).length, new Set(nobleRandom(16)).size > 1];
const w = new Worker('require("node:worker_threads").parentPort.postMessage(6 * 7)', { eval: true });
w.once('message', (answer) => {
  process.stdout.write(JSON.stringify({ atStart, hash, random, answer, isWorker: typeof w.terminate, after: loaded() }));
  void w.terminate();
});
`;

async function bundle(dir: string, source: string): Promise<string> {
  const entry = join(dir, `entry-${Math.random().toString(36).slice(2)}.ts`);
  const out = `${entry}.cjs`;
  writeFileSync(entry, source);
  const { build } = await import('esbuild');
  await build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    nodePaths: [join(ROOT, 'node_modules')],
    plugins: [lazyBuiltins],
    logLevel: 'silent',
  });
  return out;
}

test('bundled like the binary: crypto and worker_threads load at their first call, and work', async (t) => {
  const dir = tempDir(t, 'isocast-lazy-builtins-');
  const { stdout } = await run(process.execPath, [await bundle(dir, APP)]);
  assert.deepEqual(JSON.parse(stdout), {
    atStart: { crypto: false, workers: false },
    hash: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    random: [8, 16, true],
    answer: 42,
    isWorker: 'function',
    after: { crypto: true, workers: true },
  });
});

/** src/lib/http-client.ts's modules: importing them loads nothing, a call or `new` loads the real one. */
const CLIENT_APP = `
import { Agent, request } from 'node:https';
import { createGunzip } from 'node:zlib';
import { tmpdir } from 'node:os';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { createRequire } from 'node:module';
const names = ['https', 'tls', 'crypto', 'zlib', 'os', 'timers/promises', 'module'];
const loaded = () => names.filter((n) => process.moduleLoadList.includes('NativeModule ' + n));
const atStart = loaded();
void (async () => {
const agent = new Agent({ keepAlive: true });
await yieldToLoop();
const out = {
  atStart,
  agent: agent.constructor.name + ':' + agent.keepAlive,
  request: typeof request,
  gunzip: typeof createGunzip().write,
  tmp: tmpdir() === require('node:os').tmpdir(),
  require: typeof createRequire(__filename),
  after: loaded(),
};
agent.destroy();
process.stdout.write(JSON.stringify(out));
})();
`;

test('bundled like the binary: https (with tls and crypto), zlib, os, timers/promises and module load at first use', async (t) => {
  const dir = tempDir(t, 'isocast-lazy-builtins-');
  const { stdout } = await run(process.execPath, [await bundle(dir, CLIENT_APP)]);
  assert.deepEqual(JSON.parse(stdout), {
    atStart: [],
    agent: 'Agent:true',
    request: 'function',
    gunzip: 'function',
    tmp: true,
    require: 'function',
    after: ['https', 'tls', 'crypto', 'zlib', 'os', 'timers/promises', 'module'],
  });
});

test('what cannot be made lazy stops the build: instanceof on a forwarded class, a constant', async (t) => {
  const dir = tempDir(t, 'isocast-lazy-builtins-');
  await assert.rejects(
    bundle(
      dir,
      `import { Worker } from 'node:worker_threads';\nexport const is = (x: unknown) => x instanceof Worker;\n`,
    ),
    /uses instanceof Worker from node:worker_threads/,
  );
  await assert.rejects(
    bundle(dir, `import { constants } from 'node:crypto';\nexport const c = constants;\n`),
    /No matching export .* "constants"/,
  );
  assert.deepEqual(instanceofUses('a instanceof KeyObject || b instanceof Foo', new Set(['KeyObject'])), ['KeyObject']);
});
