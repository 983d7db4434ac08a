import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { listen, testApp } from '../helpers/app.ts';
import { offlineBrowser } from '../helpers/browser.ts';
import { ROUTE_DOCS } from '../../src/app.ts';

/**
 * Loads /api in the system's headless Chromium (Debian `chromium`, driven by playwright-core) with
 * every request outside the instance refused, and checks that the page lists every endpoint.
 * CI installs chromium (.ci/run) and this test must run there; a developer machine without it
 * skips with a message.
 */
export const SCREENSHOT = join(import.meta.dirname, '..', '..', 'test-artifacts', 'api-page.png');

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

  // Issue 27.10: the "receipt or x402" pill is one line, no literal backticks in the texts, and
  // the paid routes come before the operator's.
  const pills = await page.$$eval('.badge', (nodes) =>
    nodes.map((n) => ({
      text: n.textContent,
      lines: n.getClientRects().length,
      height: n.getBoundingClientRect().height,
    })),
  );
  // The paid read takes a receipt, an x402 v1 X-Payment or a v2 PAYMENT-SIGNATURE: the longest pill.
  const either = pills.filter((p) => p.text?.startsWith('receipt or x402'));
  assert.ok(either.length > 0, 'the GET /v1/signals pill is shown');
  const oneLine = Math.max(...pills.filter((p) => p.text === 'free').map((p) => p.height));
  for (const p of pills)
    assert.ok(p.lines === 1 && p.height <= oneLine + 1, `pill "${p.text}" breaks: ${JSON.stringify(p)}`);
  const text = (await page.textContent('#endpoints')) ?? '';
  assert.ok(
    !text.includes('`'),
    `literal backticks on /api: ${text.slice(text.indexOf('`') - 60, text.indexOf('`') + 60)}`,
  );
  const order = await page.$$eval('#endpoint-list table.index tbody tr', (rows) =>
    rows.map((r) => r.querySelectorAll('td')[1]?.textContent ?? ''),
  );
  assert.ok(order.indexOf('/v1/subscribe') < order.indexOf('/metrics'), order.join(' '));
  assert.ok(order.indexOf('/v1/signals') < order.indexOf('/admin'), order.join(' '));
  const sections = await page.$$eval('#endpoint-list section.tag', (s) => s.map((x) => x.id));
  assert.equal(sections.at(-1), 'tag-operations', sections.join(' '));

  mkdirSync(join(import.meta.dirname, '..', '..', 'test-artifacts'), { recursive: true });
  await page.screenshot({ path: SCREENSHOT });
  await page.screenshot({ path: SCREENSHOT.replace('.png', '-full.png'), fullPage: true });

  // The Try-it button works against the instance itself.
  await page.click('#op-getHealth button');
  await page.locator('#op-getHealth pre', { hasText: /^200 application\/json/ }).waitFor();

  // Issue 38 item 8: at a phone's 390 px the page never scrolls sideways, with every schema
  // opened too (the index and the field tables become one block per row there).
  await page.setViewportSize({ width: 390, height: 844 });
  const narrow = await page.evaluate(() => {
    const w = globalThis as any;
    for (const d of w.document.querySelectorAll('details')) d.open = true;
    return {
      scrollWidth: w.document.documentElement.scrollWidth,
      innerWidth: w.innerWidth,
      wider: [...w.document.querySelectorAll('main *')]
        .filter((n: any) => n.getBoundingClientRect().right > w.innerWidth + 0.5 && !n.closest('pre'))
        .slice(0, 5)
        .map((n: any) => `${n.tagName} ${(n.textContent ?? '').slice(0, 40)}`),
    };
  });
  assert.ok(narrow.scrollWidth <= narrow.innerWidth, `/api overflows at 390 px: ${JSON.stringify(narrow)}`);
  assert.deepEqual(narrow.wider, [], 'nothing sticks out past the right edge at 390 px');
  await page.screenshot({ path: SCREENSHOT.replace('.png', '-390.png') });

  assert.deepEqual(outside, [], 'the page asked for nothing outside the instance');
  assert.deepEqual(problems, [], 'no console errors (CSP violations included)');
  assert.ok(existsSync(SCREENSHOT));
});
