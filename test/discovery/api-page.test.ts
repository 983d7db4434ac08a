import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { listen, tempDir, testApp } from '../helpers/app.ts';
import { ROUTE_DOCS } from '../../src/app.ts';
import { repoRoot } from '../../src/lib/assets.ts';

/**
 * Loads /api in the system's headless Chromium (Debian `chromium`, driven by playwright-core) with
 * every request outside the instance refused, and checks that the page lists every endpoint.
 * CI installs chromium (.ci/run) and this test must run there; a developer machine without it
 * skips with a message.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

export const SCREENSHOT = join(repoRoot(), 'test-artifacts', 'api-page.png');

test('the /api page renders offline in headless Chromium and lists every endpoint', async (t) => {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') assert.fail(`${CHROMIUM} missing: .ci/run installs Debian chromium before the tests`);
    t.skip(`${CHROMIUM} not installed (apt-get install -y chromium); the browser test runs in CI`);
    return;
  }
  const env = testApp(t);
  const base = await listen(t, env.app.fetch);
  // A persistent context is how playwright takes a user data dir: a new empty one per run.
  const context = await chromium.launchPersistentContext(tempDir(t, 'isocast-chromium-'), {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1200, height: 900 },
  });
  t.after(() => context.close());

  const outside: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(base + '/')) return route.continue();
    outside.push(url);
    return route.abort('internetdisconnected');
  });
  const page = context.pages()[0] ?? await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(e.message));

  const res = await page.goto(`${base}/api`, { waitUntil: 'load' });
  assert.equal(res?.status(), 200);
  await page.waitForSelector('body[data-ready]');
  assert.equal(await page.getAttribute('body', 'data-ready'), 'true', await page.textContent('#status') ?? '');

  const listed = await page.$$eval('[data-endpoint]', (nodes) => nodes.map((n) => n.getAttribute('data-endpoint')));
  const expected = ROUTE_DOCS.map((d) => `${d.method.toUpperCase()} ${d.path}`);
  assert.deepEqual([...listed].sort(), [...expected].sort());
  assert.ok(await page.isVisible('text=IsocastSignalPublic'), 'schemas listed');
  assert.ok(await page.isVisible('#pay-steps li'), 'payment steps shown');
  assert.match(await page.textContent('footer') ?? '', /not financial/);

  mkdirSync(join(repoRoot(), 'test-artifacts'), { recursive: true });
  await page.screenshot({ path: SCREENSHOT });
  await page.screenshot({ path: SCREENSHOT.replace('.png', '-full.png'), fullPage: true });

  // The Try-it button works against the instance itself.
  await page.click('#op-getHealth button');
  await page.locator('#op-getHealth pre', { hasText: /^200 application\/json/ }).waitFor();

  assert.deepEqual(outside, [], 'the page asked for nothing outside the instance');
  assert.deepEqual(problems, [], 'no console errors (CSP violations included)');
  assert.ok(existsSync(SCREENSHOT));
});
