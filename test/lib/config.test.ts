import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { MOCK_PAY_TO, payTo } from '../../src/payments/pay-to.ts';

const problems = (env: Record<string, string>, argv: string[] = []) => {
  try {
    loadConfig(env, argv);
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
};

test('defaults give the offline demo: mock payments, simulated feed, ./data, port 8402', () => {
  const c = loadConfig({});
  assert.equal(c.PORT, 8402);
  assert.equal(c.HOST, '127.0.0.1', 'mock mode listens on loopback unless HOST is set');
  assert.equal(c.DATA_DIR, './data');
  assert.equal(c.PAYMENT_MODE, 'mock');
  assert.equal(c.FEED, 'sim');
  assert.equal(c.BASE_URL, 'http://localhost:8402');
  assert.equal(c.TERMS_URL, 'http://localhost:8402/terms.txt');
  assert.equal(c.OFAC_REQUIRED, false);
  assert.equal(c.LOG_LEVEL, 'info');
  assert.equal(payTo(c), MOCK_PAY_TO);
});

test('flags override variables, in both --flag value and --flag=value forms', () => {
  const c = loadConfig({ PORT: '9000', LOG_LEVEL: 'warn' }, [
    '--port',
    '9100',
    '--log-level=debug',
    '--base-url',
    'https://signals.example.com/',
  ]);
  assert.equal(c.PORT, 9100);
  assert.equal(c.LOG_LEVEL, 'debug');
  assert.equal(c.BASE_URL, 'https://signals.example.com');
  assert.equal(c.TERMS_URL, 'https://signals.example.com/terms.txt');
});

test('every bad value is reported, one line each', () => {
  const p = problems({ PORT: 'eighty', PAYMENT_MODE: 'free', PAY_TO: '0x123', FEED: 'x', SERVER_SECRET: 'short' }, [
    '--nope',
    '1',
  ]);
  assert.equal(p.length, 6, p.join('\n'));
  assert.ok(p.some((l) => l.startsWith('PORT:')));
  assert.ok(p.some((l) => l.startsWith('PAYMENT_MODE:')));
  assert.ok(p.some((l) => l.startsWith('PAY_TO:')));
  assert.ok(p.some((l) => l.startsWith('SERVER_SECRET:')));
  assert.ok(p.some((l) => l === 'unknown flag: --nope'));
});

test('live mode refuses to start without a real non-zero settlement wallet', () => {
  const live = {
    PAYMENT_MODE: 'live',
    FEED: 'live',
    FACILITATOR_URL: 'http://127.0.0.1:9',
    OFAC_LIST_PATH: '/etc/isocast/sdn.txt',
  };
  assert.ok(problems(live).some((l) => l.startsWith('PAY_TO:')));
  assert.ok(problems({ ...live, PAY_TO: '0x' + '0'.repeat(40) }).some((l) => l.startsWith('PAY_TO:')));
  const ok = loadConfig({ ...live, PAY_TO: '0x' + '1'.repeat(40) });
  assert.equal(ok.OFAC_REQUIRED, true, 'live mode requires a sanctions list by default');
  assert.equal(ok.HOST, '0.0.0.0');
  assert.equal(payTo(ok), '0x' + '1'.repeat(40));
});

test('the serve command exits 2 with one clear line per problem', () => {
  const r = spawnSync(process.execPath, ['src/main.ts', 'serve'], {
    env: { ...process.env, PAYMENT_MODE: 'live', PORT: '-1', DATA_DIR: '/nonexistent-never-created' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.status, 2, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.ok(
    lines.every((l) => l.startsWith('config: ')),
    r.stderr,
  );
  assert.ok(lines.some((l) => l.includes('PORT')));
});
