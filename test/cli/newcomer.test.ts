import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { listen, tempDir, testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { inParallel, runMain } from '../helpers/main-process.ts';
import type { CliCommand } from '../../src/buyer/cli/help.ts';
import { runCli } from '../../src/buyer/cli/index.ts';
import { nearest } from '../../src/lib/nearest.ts';

/**
 * The CLI as a newcomer meets it (issue 27.7, 27.8): a throwaway key, each command's own help, one
 * message with the fix for a scheme-less --server, the nearest slug for a typo'd city, upper case
 * accepted, `cities`, one-line usage errors, and `register-chat --delete` with nothing registered.
 */
const KEY = `0x${'5'.repeat(64)}` as `0x${string}`;

async function setup(t: Parameters<typeof testApp>[0]) {
  const app = testApp(t);
  const server = await listen(t, app.app.fetch);
  const dir = tempDir(t, 'isocast-newcomer-');
  const run = async (command: CliCommand, args: string[], envKey: string | undefined = KEY) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(command, args, {
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
      envKey,
      nowMs: () => app.clock.now(),
      stateHome: join(dir, 'state'),
    });
    return { code, out, err };
  };
  return { app, server, dir, run };
}

test('keygen: a new key and its address, a warning, and a 0600 file with --out', async (t) => {
  const { dir, run } = await setup(t);
  const r = await run('keygen', [], undefined);
  assert.equal(r.code, 0);
  const key = /^ISOCAST_KEY=(0x[0-9a-f]{64})$/.exec(r.out[0]!)![1]! as `0x${string}`;
  assert.equal(r.out[1], `address ${privateKeyToAccount(key).address}`);
  assert.match(r.err[0]!, /^warning: a new throwaway key for testing/);
  assert.notEqual((await run('keygen', [], undefined)).out[0], r.out[0], 'a new key every time');
  const file = join(dir, 'demo.key');
  const w = await run('keygen', ['--out', file], undefined);
  assert.equal(w.code, 0);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const saved = readFileSync(file, 'utf8').trim() as `0x${string}`;
  assert.match(w.out[0]!, new RegExp(`^address ${privateKeyToAccount(saved).address}; key written to`));
  assert.ok(!w.out.join('\n').includes(saved), 'the key is not printed when it goes to a file');
  assert.equal((await run('keygen', ['--out', file], undefined)).code, 2, 'never overwrites a key');
});

test('per-command help through the entry point; usage errors are one line plus that usage', async (t) => {
  // Every operator command has its own usage too, and the command list names every command.
  const commands = ['serve', 'doctor', 'backup', 'restore', 'migrate', 'cities', 'keygen'];
  // Eleven real entry-point runs, a few at a time: each waits mostly on its own Node start-up.
  const [help, all, bye, mode, ...owns] = await inParallel([
    () => runMain(['buy', '--help']),
    () => runMain(['--help']),
    () => runMain(['bye']),
    () => runMain(['doctor'], { env: { ...process.env, PAYMENT_MODE: 'lve' } }),
    ...commands.map((command) => () => runMain([command, '--help'])),
  ]);
  assert.equal(help!.status, 0);
  assert.match(help!.stdout, /^usage: isocast buy --city <slug> --count <n>/);
  assert.ok(!/Commands:/.test(help!.stdout), 'not the general help');
  commands.forEach((command, i) => {
    const own = owns[i]!;
    assert.equal(own.status, 0, own.stderr);
    assert.match(own.stdout, new RegExp(`^usage: isocast ${command}\\b`), command);
    assert.ok(!/Commands:/.test(own.stdout), `${command} --help is not the general help`);
  });
  assert.match(all!.stdout, /^Commands:$/m, 'isocast --help is the general help');
  assert.match(all!.stdout, /buy, read, receipt, register-chat, cities, keygen/);
  assert.equal(bye!.status, 2);
  assert.match(bye!.stderr, /^isocast: unknown command "bye"; did you mean buy\?\n/);
  assert.ok(bye!.stderr.split('\n').length <= 4, 'a short answer, not the whole help');
  assert.equal(mode!.status, 2);
  assert.match(mode!.stderr, /PAYMENT_MODE: "lve" is not one of mock, live; did you mean live\?/);
  const { run } = await setup(t);
  const r = await run('buy', ['--city', 'nyc']);
  assert.equal(r.code, 2);
  const lines = r.err.join('\n').split('\n');
  assert.equal(lines[0], 'isocast buy: --count is required (an integer of at least 2)');
  assert.match(lines[1]!, /^usage: isocast buy /);
  assert.ok(lines.length <= 6, `short: ${lines.length} lines`);
});

test('a scheme-less --server: one message with the fix, the same in buy and read', async (t) => {
  const { run } = await setup(t);
  for (const command of ['buy', 'read'] as const) {
    const r = await run(command, [
      '--city',
      'nyc',
      ...(command === 'buy' ? ['--count', '2'] : []),
      '--server',
      'localhost:8402',
    ]);
    assert.equal(r.code, 2);
    assert.equal(
      r.err[0]!.split('\n')[0],
      `isocast ${command}: --server must be an absolute http(s) URL, got localhost:8402; did you mean http://localhost:8402?`,
    );
  }
  const remote = await run('read', ['--city', 'nyc', '--server', 'signals.example']);
  assert.match(remote.err[0]!, /did you mean https:\/\/signals\.example\?/);
});

test('a typo in the city suggests the nearest slug; upper case is accepted', async (t) => {
  const { app, server, run } = await setup(t);
  insertSignals(app.db, 'nyc', 3);
  const typo = await run('buy', ['--city', 'nyk', '--count', '2', '--server', server, '--yes']);
  assert.equal(typo.code, 2, 'an unknown city is a usage error (README: exit 2)');
  assert.match(typo.err[0]!, /^isocast buy: unknown city: nyk .*did you mean nyc\?/);
  const upper = await run('buy', ['--city', 'NYC', '--count', '2', '--server', server, '--yes']);
  assert.equal(upper.code, 0, upper.err.join('\n'));
  assert.match(upper.out[0]!, /^bought 2 nyc signals/);
  assert.equal(nearest('londn', ['london', 'paris']), 'london');
  assert.equal(nearest('tokyo-x', ['tokyo']), 'tokyo');
  assert.equal(nearest('zzzzzz', ['london', 'paris']), null);
});

test('cities lists slugs, kind, local time and latest seq; --kind picks the streams', async (t) => {
  const { app, server, run } = await setup(t);
  insertSignals(app.db, 'nyc', 3);
  const r = await run('cities', ['--server', server]);
  assert.equal(r.code, 0, r.err.join('\n'));
  assert.match(r.out[0]!, /^slug +kind +local +latest seq +name$/);
  assert.ok(
    r.out.some((l) => /^nyc +high +\d\d:\d\d +3 +/.test(l)),
    r.out.join('\n'),
  );
  assert.equal(r.out.length, 38);
  assert.match(r.err.join('\n'), /^37 cities \(daily highs; --kind low lists/);
  const j = await run('cities', ['--server', server, '--json']);
  assert.deepEqual(Object.keys(JSON.parse(j.out[0]!)), ['slug', 'kind', 'localTime', 'latestSeq']);
  const bad = await run('cities', ['--server', server, '--kind', 'lows']);
  assert.equal(bad.code, 2);
  assert.match(bad.err[0]!, /--kind must be high, low or all, not "lows"/);
});

test('register-chat --delete with nothing registered and no city explains itself', async (t) => {
  const { server, run } = await setup(t);
  const r = await run('register-chat', ['--delete', '--server', server]);
  assert.equal(r.code, 1);
  assert.equal(
    r.err[0],
    `isocast register-chat: nothing to delete: wallet ${privateKeyToAccount(KEY).address} has no chat registered at ${server}`,
  );
});
