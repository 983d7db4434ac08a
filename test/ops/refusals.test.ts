import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { runMain } from '../helpers/main-process.ts';
import { type ConfigError, loadConfig } from '../../src/config.ts';
import { MOCK_PAY_TO } from '../../src/payments/pay-to.ts';

/**
 * Every unsafe configuration of Deliver 1 and 3, through the real entry point: exit 2 and one
 * `config:` line naming the problem. The base is a complete live configuration that does start,
 * so each case differs from a working one by exactly the setting under test.
 */
const SDN = '0x' + 'a1'.repeat(20);

function liveEnv(t: Parameters<typeof tempDir>[0]): Record<string, string> {
  const dir = tempDir(t);
  const list = join(dir, 'sdn.txt');
  writeFileSync(list, `${SDN}\n`);
  return {
    PAYMENT_MODE: 'live',
    FEED: 'live',
    PAY_TO: '0x' + '1'.repeat(40),
    FACILITATOR_URL: 'http://127.0.0.1:9',
    OFAC_LIST_PATH: list,
    DATA_DIR: join(dir, 'data'),
    PORT: '0',
    LOG_LEVEL: 'error',
    // The live feed's first poll must not reach the internet.
    GAMMA_URL: 'http://127.0.0.1:9',
    CLOB_URL: 'http://127.0.0.1:9',
    METAR_URL: 'http://127.0.0.1:9',
  };
}

/** The environment without anything the developer's shell may have set for isocast. */
function baseProcessEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(PAYMENT_MODE|FEED|PAY_TO|OFAC_|ADMIN_TOKEN|HOST|PORT|DATA_DIR)/.test(k)) env[k] = v;
  return env;
}

/** `serve` through the real entry point; awaited, so a test's several refusals run side by side. */
async function serve(env: Record<string, string>, args: string[] = []) {
  const r = await runMain(['serve', ...args], { env: { ...baseProcessEnv(), ...env }, timeoutMs: 60_000 });
  return { status: r.status, lines: r.stderr.trim().split('\n').filter(Boolean), stderr: r.stderr };
}

function refused(r: Awaited<ReturnType<typeof serve>>, expected: string | RegExp) {
  assert.equal(r.status, 2, r.stderr);
  assert.ok(
    r.lines.every((l) => l.startsWith('config: ')),
    r.stderr,
  );
  assert.equal(r.lines.length, 1, `exactly one problem:\n${r.stderr}`);
  if (typeof expected === 'string') assert.equal(r.lines[0], expected);
  else assert.match(r.lines[0]!, expected);
}

test('the complete live base configuration starts (so each refusal below is caused by its one setting)', async (t) => {
  const env = liveEnv(t);
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
    env: { ...baseProcessEnv(), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => {
    child.kill('SIGKILL');
  });
  let err = '';
  child.stderr.setEncoding('utf8');
  const line = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: string) => {
      err += d;
      const m = /isocast listening on .*\n/.exec(err);
      if (m) resolve(m[0]);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  assert.match(line, /payment mode: live {2}feed: live {2}\d+ cities, \d+ low streams {2}data: /);
  assert.match(
    line,
    /http:\/\/0\.0\.0\.0:\d+/,
    'live mode keeps the 0.0.0.0 default (it sits behind a proxy or is public by intent)',
  );
});

test('refused: live payments with the simulated feed', async (t) => {
  refused(
    await serve({ ...liveEnv(t), FEED: 'sim' }),
    'config: FEED: live payment mode cannot sell the simulated feed; set FEED=live (or PAYMENT_MODE=mock for a demo)',
  );
});

test('refused: live payments to the mock PAY_TO', async (t) => {
  refused(
    await serve({ ...liveEnv(t), PAY_TO: MOCK_PAY_TO }),
    `config: PAY_TO: ${MOCK_PAY_TO} is the conventional burn address, and isocast's mock-mode PAY_TO; payments to it are lost. Set your own wallet`,
  );
});

test('refused: live payments to well-known burn and system addresses', async (t) => {
  const env = liveEnv(t);
  const cases: [string, RegExp][] = [
    ['0x' + '0'.repeat(40), /is the zero address/],
    ['0x' + '0'.repeat(39) + '1', /is a precompiled contract/],
    ['0xdEAD000000000000000042069420694206942069', /is a well-known burn address/],
    ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', /is the USDC token contract itself/],
    ['0x4200000000000000000000000000000000000006', /is a Base system \(predeploy\) contract/],
  ];
  // Two through the real entry; the rest through the same loadConfig it calls (each spawn costs ~1 s).
  const spawned = cases.slice(0, 2);
  const answers = await Promise.all(spawned.map(([payTo]) => serve({ ...env, PAY_TO: payTo })));
  for (const [i, [payTo, reason]] of spawned.entries())
    refused(answers[i]!, new RegExp(`^config: PAY_TO: ${payTo} ${reason.source}`));
  for (const [payTo, reason] of cases.slice(2)) {
    assert.throws(
      () => loadConfig({ ...env, PAY_TO: payTo }),
      (err: ConfigError) => {
        assert.deepEqual(err.problems.length, 1);
        assert.match(err.problems[0]!, new RegExp(`^PAY_TO: ${payTo} ${reason.source}`));
        return true;
      },
    );
  }
});

test('refused: live payments without a sanctions list, unless OFAC_REQUIRED=false says so', async (t) => {
  const { OFAC_LIST_PATH: _path, ...env } = liveEnv(t);
  const dir = tempDir(t);
  writeFileSync(join(dir, 'empty.txt'), '# nothing yet\n\n');
  const [none, missing, empty] = await Promise.all([
    serve(env),
    serve({ ...env, OFAC_LIST_PATH: join(dir, 'missing.txt') }),
    serve({ ...env, OFAC_LIST_PATH: join(dir, 'empty.txt') }),
  ]);
  refused(
    none!,
    'config: OFAC_LIST_PATH: live payment mode needs a sanctions list; set OFAC_LIST_PATH=<file> (or OFAC_REQUIRED=false to run without one)',
  );
  assert.equal(loadConfig({ ...env, OFAC_REQUIRED: 'false' }).OFAC_REQUIRED, false, 'said explicitly, it is allowed');
  // A list that cannot be read, or that holds no address, counts as no list.
  refused(
    missing!,
    /^config: OFAC_LIST_PATH: cannot read sanctions list .*missing\.txt: ENOENT.*; fix the file \(or set OFAC_REQUIRED=false to run without one\)$/,
  );
  refused(
    empty!,
    /^config: OFAC_LIST_PATH: sanctions list .*empty\.txt holds no addresses \(empty or not in a known format\); fix the file/,
  );
});

test('refused: the example ADMIN_TOKEN, and one shorter than 32 characters', async (t) => {
  const env = liveEnv(t);
  // Whatever deploy/env.example says today is refused: a copy-paste never starts.
  const example = /^ADMIN_TOKEN=(.*)$/m.exec(readFileSync('deploy/env.example', 'utf8'))![1]!;
  const [documented, copied, short] = await Promise.all([
    serve({ ...env, ADMIN_TOKEN: 'change-me-to-a-long-random-string' }),
    serve({ ...env, ADMIN_TOKEN: example }),
    serve({ ...env, PAYMENT_MODE: 'mock', ADMIN_TOKEN: 'x'.repeat(31) }),
  ]);
  refused(
    documented!,
    'config: ADMIN_TOKEN: is the example value from deploy/env.example; generate one with `openssl rand -hex 32`',
  );
  refused(
    copied!,
    'config: ADMIN_TOKEN: is the example value from deploy/env.example; generate one with `openssl rand -hex 32`',
  );
  refused(
    short!,
    'config: ADMIN_TOKEN: must be at least 32 characters (got 31); generate one with `openssl rand -hex 32`',
  );
});

test('refused: a secret given as a command-line flag (it would show in ps)', async (t) => {
  const [token, key] = await Promise.all([
    serve({ ...liveEnv(t) }, ['--admin-token', 'a'.repeat(40)]),
    serve({ ...liveEnv(t) }, [`--settler-private-key=0x${'1'.repeat(64)}`]),
  ]);
  refused(
    token!,
    'config: --admin-token: secrets are not accepted as command-line flags (any local user sees them in ps); set ADMIN_TOKEN or ADMIN_TOKEN_FILE=<path> in the environment',
  );
  refused(key!, /^config: --settler-private-key: secrets are not accepted/);
});

test('refused: user:password@ in a URL that cannot carry it', async (t) => {
  const [gamma, facilitator] = await Promise.all([
    serve({ ...liveEnv(t), GAMMA_URL: 'https://me:pw@gamma.example' }),
    serve({ ...liveEnv(t), FACILITATOR_URL: 'https://me:pw@fac.example', FACILITATOR_AUTH: 'Bearer x' }),
  ]);
  refused(
    gamma!,
    'config: GAMMA_URL: user:password@ in this URL is not supported (only RPC_URL and FACILITATOR_URL take credentials); remove them',
  );
  refused(facilitator!, 'config: FACILITATOR_URL: has user:password@ and FACILITATOR_AUTH is set too; use one of them');
});

test('several problems: one line each, all reported at once', async (t) => {
  const r = await serve({ ...liveEnv(t), FEED: 'sim', PAY_TO: MOCK_PAY_TO, ADMIN_TOKEN: 'short' });
  assert.equal(r.status, 2, r.stderr);
  assert.deepEqual(
    r.lines.map((l) => l.split(':').slice(0, 2).join(':')),
    ['config: ADMIN_TOKEN', 'config: FEED', 'config: PAY_TO'],
  );
});
