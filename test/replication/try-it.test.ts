import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../helpers/app.ts';

/**
 * docs/operations.md's "Try it locally" recipe (issue 38 item 3), run word for word with sh from
 * the checkout's root, as a newcomer pastes it: the real `serve` with the checkout's Litestream
 * (found under node_modules, no LITESTREAM_BIN), a purchase, `kill -9`, `isocast restore` into a
 * fresh DATA_DIR, a new start that still has the purchase. Only the port (a free one on
 * 127.0.0.1), TMPDIR (what `mktemp -d` uses) and HOME are the test's.
 */
function recipe(): string {
  const text = readFileSync('docs/operations.md', 'utf8');
  const m = /<!-- try-it: [^\n]*-->\n```sh\n([\s\S]*?)```\n/.exec(text);
  assert.ok(m, 'docs/operations.md has the try-it block');
  return m[1]!;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

test("operations.md's local Litestream recipe runs as written: buy, kill -9, restore, the purchase is there", async (t) => {
  const root = tempDir(t);
  const tmp = join(root, 'tmp');
  mkdirSync(tmp);
  const env = {
    // Nothing of the caller's PATH but the system's and our Node's directory: no other litestream.
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: root,
    TMPDIR: tmp,
    PORT: String(await freePort()),
  };
  const sh = spawn('/bin/sh', ['-c', recipe()], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  // A failed run must not leave a server or a Litestream behind: the whole group goes.
  t.after(() => {
    try {
      process.kill(-sh.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  let out = '';
  let err = '';
  sh.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  sh.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((resolve) => sh.once('close', resolve));
  assert.equal(code, 0, `${out}\n${err}`);

  assert.match(out, /^bought 20 nyc signals at 0\.005 USDC each/m);
  assert.match(
    out,
    /^restored \S+\/restored\/isocast\.db from file \S+\/replica in [\d.]+ s: quick_check ok, schema v\d+, 1 applied payments, \d+ signals$/m,
  );
  // The restored server still knows the purchase: `read` reports the ceiling `buy` printed (20 past
  // nyc's latest at the purchase, which a simulated signal may have moved before it; before nyc's
  // first signal `read` says so on stderr).
  const through = /^entitled through seq (\d+) \(latest now \d+\)/m.exec(out)?.[1];
  assert.ok(through && Number(through) >= 20, out);
  assert.match(
    `${out}${err}`,
    new RegExp(
      `(\\d+ signal\\(s\\); entitled through seq ${through}, latest \\d+|no new signals yet: latest is seq \\d+, entitled through seq ${through})`,
    ),
  );
  assert.doesNotMatch(`${out}${err}`, /already in use/);
  const [dir] = readdirSync(tmp);
  assert.ok(readdirSync(join(tmp, dir!, 'replica')).length > 0, 'the replica was written');
  // The server-secret copy was all the restore needed beside the replica.
  assert.deepEqual(readdirSync(join(tmp, dir!)).sort(), [
    'data',
    'demo.key',
    'receipts',
    'replica',
    'restored',
    'server-secret',
  ]);
});
