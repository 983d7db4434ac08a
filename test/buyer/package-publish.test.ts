import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { listen, tempDir, testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { installClientPackage, PACKAGE_DIR } from '../helpers/client-package.ts';

/**
 * The package as it would be published (issue 37 item 3): `npm publish --dry-run` of the packed
 * tarball lists only what a user needs, the manifest carries a license, a bin and no dependencies,
 * and the MCP host configuration that opens the README is taken as written: its JSON is parsed,
 * and its command (npx, offline, in a project where the tarball is installed) is started by the
 * MCP SDK's client, which buys from a real isocast on 127.0.0.1 (mock payments).
 */
const SHIPPED = [
  'LICENSE',
  'README.md',
  'dist/index.d.ts',
  'dist/index.js',
  'dist/isocast-mcp.js',
  'dist/mcp.d.ts',
  'dist/mcp.js',
  'dist/siwx.d.ts',
  'dist/siwx.js',
  'package.json',
];

function npm(args: string[], o: { cwd: string; home: string }): Promise<string> {
  const env = { PATH: process.env.PATH, HOME: o.home, npm_config_update_notifier: 'false', npm_config_offline: 'true' };
  return new Promise((resolve, reject) =>
    execFile('npm', args, { cwd: o.cwd, env, timeout: 120_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

type HostConfig = { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> };

/** The README's first ```json block: the host configuration a buyer pastes. */
function readmeHostConfig(readme: string): HostConfig {
  const m = /```json\n([\s\S]*?)\n```/.exec(readme);
  assert.ok(m, 'the README has a JSON block');
  const before = readme.slice(0, m.index);
  assert.ok(!/```/.test(before), 'the host configuration is the first code block of the README');
  return JSON.parse(m[1]!) as HostConfig;
}

test('npm publish --dry-run ships only dist, README, LICENSE and the manifest; no dependencies, a license, the bin', async (t) => {
  const { tarball } = installClientPackage(t);
  const home = tempDir(t, 'isocast-publish-');
  const out = JSON.parse(await npm(['publish', tarball, '--dry-run', '--json'], { cwd: home, home }));
  const published = out['@isocast/client'] ?? out;
  const files = (published.files as { path: string }[]).map((f) => f.path).sort();
  assert.deepEqual(files, SHIPPED);
  const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'));
  assert.equal(manifest.license, 'MIT');
  assert.equal(manifest.dependencies, undefined, 'zero runtime dependencies besides peers');
  assert.deepEqual(manifest.bin, { 'isocast-mcp': 'dist/isocast-mcp.js' });
  assert.equal(manifest.peerDependenciesMeta['@modelcontextprotocol/sdk'].optional, true);
  assert.match(
    readFileSync(join(PACKAGE_DIR, 'src/mcp/bin.ts'), 'utf8'),
    new RegExp(`VERSION = '${manifest.version.replace(/\./g, '\\.')}'`),
    'the bin reports the package version',
  );
  t.diagnostic(`npm publish --dry-run: ${files.join(', ')} (${published.size} bytes packed)`);
});

test("the README's MCP host configuration, run as written, serves the tools and buys", async (t) => {
  const { project } = installClientPackage(t);
  const readme = readFileSync(join(PACKAGE_DIR, 'README.md'), 'utf8');
  const config = readmeHostConfig(readme);
  const block = /```json\n[\s\S]*?\n```/.exec(readme)![0];
  assert.ok(
    readFileSync(join(PACKAGE_DIR, '..', '..', 'README.md'), 'utf8').includes(block),
    'the main README shows the same block',
  );
  const entry = config.mcpServers.isocast!;
  assert.equal(entry.command, 'npx');
  assert.deepEqual(Object.keys(entry.env).sort(), ['ISOCAST_KEY', 'ISOCAST_MAX_USD_PER_DAY', 'ISOCAST_SERVER']);

  let fetchApp: (req: Request) => Response | Promise<Response> = () => new Response(null, { status: 503 });
  const base = await listen(t, (req) => fetchApp(req));
  const env = testApp(t, { env: { BASE_URL: base }, nowMs: Date.now() });
  insertSignals(env.db, 'nyc', 3);
  fetchApp = env.app.fetch;
  const key = generatePrivateKey();
  const home = tempDir(t, 'isocast-host-');
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args,
    cwd: project,
    // As the host would: the block's env, with this test's server and key in place of the placeholders.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
      ...entry.env,
      ISOCAST_SERVER: base,
      ISOCAST_KEY: key,
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'readme-host', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((x) => x.name),
    ['list_cities', 'get_sample', 'buy_signals', 'read_signals'],
  );
  const bought = await client.callTool({ name: 'buy_signals', arguments: { city: 'nyc', count: 2 } });
  assert.ok(!bought.isError, JSON.stringify(bought.content));
  const rows = env.db
    .prepare('SELECT amount_micro, status FROM payments WHERE lower(payer) = lower(?)')
    .all(privateKeyToAccount(key).address);
  assert.deepEqual(rows, [{ amount_micro: 10_000, status: 'applied' }]);
  assert.equal(client.getServerVersion()?.name, 'isocast');
});
