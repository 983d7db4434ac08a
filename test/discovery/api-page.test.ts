import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { listen, testApp } from '../helpers/app.ts';
import { offlineBrowser } from '../helpers/browser.ts';
import { ROUTE_DOCS } from '../../src/app.ts';
import { repoRoot } from '../../src/lib/assets.ts';

/**
 * Loads /api in the system's headless Chromium (Debian `chromium`, driven by playwright-core) with
 * every request outside the instance refused, and checks that the page lists every endpoint.
 * CI installs chromium (.ci/run) and this test must run there; a developer machine without it
 * skips with a message.
 */
export const SCREENSHOT = join(repoRoot(), 'test-artifacts', 'api-page.png');

test('the /api page renders offline in headless Chromium and lists every endpoint', async (t) => {
  const env = testApp(t);
  const base = await listen(t, env.app.fetch);
  const browser = await offlineBrowser(t, base, { viewport: { width: 1200, height: 900 } });
  if (!browser) return;
  const { page, outside } = browser;
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));

  const res = await page.goto(`${base}/api`, { waitUntil: 'load' });
  assert.equal(res?.status(), 200);
  await page.waitForSelector('body[data-ready]');
  assert.equal(await page.getAttribute('body', 'data-ready'), 'true', (await page.textContent('#status')) ?? '');

  const listed = await page.$$eval('[data-endpoint]', (nodes) => nodes.map((n) => n.getAttribute('data-endpoint')));
  const expected = ROUTE_DOCS.map((d) => `${d.method.toUpperCase()} ${d.path}`);
  assert.deepEqual([...listed].sort(), [...expected].sort());
  assert.ok(await page.isVisible('text=IsocastSignalPublic'), 'schemas listed');
  assert.ok(await page.isVisible('#pay-steps li'), 'payment steps shown');
  assert.match((await page.textContent('footer')) ?? '', /not financial/);

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
