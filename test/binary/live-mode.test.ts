import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { tempDir } from '../helpers/app.ts';
import { BINARY, ROOT } from '../../scripts/build-binary.ts';

const run = promisify(execFile);

/**
 * Live mode in the single binary: its settlers are the second bundle `payments-live.cjs`, an
 * asset evaluated on first use (scripts/sea/asset-bundles.ts). Every upstream is a closed port,
 * so each settlement's own way of failing shows that bundle's code ran.
 */
test('single binary, live mode: the live settlers load from their asset', { timeout: 600_000 }, async (t) => {
  await run(process.execPath, [join(ROOT, 'scripts', 'build-binary.ts'), '--if-stale'], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const dir = tempDir(t, 'isocast-binary-live-');
  const bin = join(dir, 'isocast');
  copyFileSync(BINARY, bin);
  const closed = 'http://127.0.0.1:9';
  const buyer = privateKeyToAccount(keccak256(toHex('isocast-binary-live-buyer')));

  for (const settlement of ['facilitator', 'chain'] as const) {
    await t.test(`SETTLEMENT=${settlement}`, async () => {
      const child = spawn(bin, ['serve'], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: dir,
          XDG_CACHE_HOME: join(dir, 'cache'),
          DATA_DIR: join(dir, `data-${settlement}`),
          HOST: '127.0.0.1',
          PORT: '0',
          PAYMENT_MODE: 'live',
          FEED: 'live',
          SETTLEMENT: settlement,
          OFAC_REQUIRED: 'false',
          PAY_TO: '0x1111111111111111111111111111111111111111',
          SETTLER_PRIVATE_KEY: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
          FACILITATOR_URL: closed,
          RPC_URL: closed,
          GAMMA_URL: closed,
          CLOB_URL: closed,
          WEATHER_URL: closed,
          METAR_URL: closed,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      t.after(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      let output = '';
      const port = await new Promise<number>((resolve, reject) => {
        const onData = (c: Buffer) => {
          output += c.toString();
          const m = /"msg":"listening".*?"port":(\d+)/.exec(output);
          if (m) resolve(Number(m[1]));
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const base = `http://127.0.0.1:${port}`;
      assert.equal((await fetch(`${base}/health`)).status, 200);

      const url = `${base}/v1/subscribe?city=nyc&count=5`;
      const challenge = await (await fetch(url, { method: 'POST' })).json();
      const paid = await fetch(url, {
        method: 'POST',
        headers: { 'x-payment': (await payFor402(challenge, buyer)).xPayment },
      });
      const body = (await paid.json()) as { error: string; reason?: string };
      if (settlement === 'facilitator') {
        // Nothing reached the facilitator: certainly not charged.
        assert.equal(paid.status, 402, JSON.stringify(body));
        assert.match(body.reason ?? '', /facilitator unreachable/);
      } else {
        // The chain settler could not ask the token contract: in doubt, retry the same header.
        assert.equal(paid.status, 503, JSON.stringify(body));
        assert.match(body.error, /settlement pending/);
      }
      child.kill('SIGTERM');
      assert.equal(await exited, 0, output);
    });
  }
});
