import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { offlineBrowser } from '../helpers/browser.ts';
import { ADMIN_TOKEN, BUYERS, seededInstance } from './instance.ts';

/**
 * Drives /admin in the system's headless Chromium (playwright-core) against a real server holding
 * real purchases, signals, a refund and deliveries, with every request outside the instance
 * refused. Enters the token, checks each section, and keeps a screenshot. CI installs chromium
 * and this test must run there; a developer machine without it skips with a message.
 */
export const SCREENSHOT = join(import.meta.dirname, '..', '..', 'test-artifacts', 'admin-page.png');

test('the operator page asks for the token, then renders every section with charts, offline, in headless Chromium', async (t) => {
  const s = await seededInstance(t);
  const base = s.base;
  const requested: { url: string; authorization: string | undefined }[] = [];
  const browser = await offlineBrowser(t, base, {
    viewport: { width: 1280, height: 900 },
    onRequest: (url, headers) => requested.push({ url, authorization: headers.authorization }),
  });
  if (!browser) return;
  const { page, outside } = browser;
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !/401/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));

  const res = await page.goto(`${base}/admin`, { waitUntil: 'load' });
  assert.equal(res?.status(), 200);
  await page.waitForSelector('body[data-state="login"]');
  assert.ok(await page.isVisible('#login'), 'asks for the token first');
  assert.equal(await page.isVisible('#controls'), false);
  assert.equal(await page.isVisible('#dashboard'), false, 'no data before the token');

  // A wrong token is refused and forgotten.
  await page.fill('#token', 'not-the-admin-token-at-all');
  await page.click('#login button[type=submit]');
  await page.waitForSelector('body[data-state="login"] #status:not([hidden])');
  assert.match((await page.textContent('#status')) ?? '', /not accepted/);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('isocast.adminToken')), null);

  await page.fill('#token', ADMIN_TOKEN);
  await page.click('#login button[type=submit]');
  await page.waitForSelector('body[data-state="ready"]');
  assert.equal(await page.isVisible('#login'), false, 'the form goes once the data is shown');
  assert.ok(await page.isVisible('#controls'));

  // Totals and revenue: $2.57 applied over three UTC days, one refund of $0.10 owed.
  const totals = (await page.textContent('#totals')) ?? '';
  assert.match(totals, /Revenue \(applied\)\$2\.57/);
  assert.match(totals, /Refunds queued1 \(\$0\.10\)/);
  assert.equal(
    await page.locator('#revenue-day-chart svg rect[data-day]').count(),
    4,
    'one bar segment per (day, city)',
  );
  assert.equal(await page.locator('#revenue-city-chart svg rect').count(), 3, 'nyc, london, paris');
  assert.match((await page.textContent('#revenue-table')) ?? '', /2026-07-14nyc2\$2\.01/);

  // Poller health: NYC fine at 72 °F, Chicago backing off with its error, London without a market.
  const poller = (await page.textContent('#poller-table')) ?? '';
  assert.match(poller, /NYC.*ok.*72°F, bucket 72-73°F \(2026-07-15\)/);
  assert.match(poller, /Chicago.*backing off \(2\).*market buckets are not in °F/);
  assert.match(poller, /London.*no market/);
  assert.match((await page.textContent('#poller-tick')) ?? '', /1 signal\(s\), 0 error\(s\)/);

  // Latency: each step of the seeded METAR signals as p50/p90/p99 bars, and the per-city table.
  assert.match((await page.textContent('#latency-chart')) ?? '', /metar-api report → stored/);
  assert.ok((await page.locator('#latency-chart svg rect.latency-bar').count()) >= 9, 'three bars per step');
  assert.match((await page.textContent('#latency-table')) ?? '', /nyc\s*2/);

  // Payments: shortened wallets with the full address on hover, tx hashes, outcomes.
  assert.equal(await page.locator('#payments-table tbody tr').count(), 6);
  const b = BUYERS.b.address.toLowerCase();
  assert.equal(
    await page.locator(`#payments-table code[title="${b}"]`).first().textContent(),
    `${b.slice(0, 6)}…${b.slice(-4)}`,
  );
  assert.match((await page.textContent('#payments-table')) ?? '', /refund_queued/);
  assert.equal(await page.locator('#entitlements-table tbody tr').count(), 5);
  assert.match((await page.textContent('#deliveries-table')) ?? '', /72-73°F\s*sent/);
  assert.equal(await page.locator('#deliveries-chart svg rect').count(), 4);

  // The refund reason holds markup; it is shown as text and never becomes elements.
  assert.match((await page.textContent('#refunds-table')) ?? '', /<img src=x onerror=/);
  assert.equal(await page.locator('#refunds-table img, #refunds-table b').count(), 0);
  assert.equal(await page.getAttribute('body', 'data-pwned'), null);
  assert.match((await page.textContent('footer')) ?? '', /not financial/);

  mkdirSync(join(import.meta.dirname, '..', '..', 'test-artifacts'), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });

  // Issue 38 item 8: at a phone's 390 px the page never scrolls sideways (a wide table scrolls
  // inside its own box), and in the payments table each header stands over its values: numbers
  // right-aligned under a right-aligned header, the rest left-aligned under theirs.
  await page.setViewportSize({ width: 390, height: 844 });
  const narrow = await page.evaluate(() => {
    const w = globalThis as any;
    return {
      scrollWidth: w.document.documentElement.scrollWidth,
      innerWidth: w.innerWidth,
      tablesInScrollBoxes: [...w.document.querySelectorAll('table.data')].every(
        (t: any) => t.parentElement !== null && w.getComputedStyle(t.parentElement).overflowX === 'auto',
      ),
    };
  });
  assert.ok(narrow.scrollWidth <= narrow.innerWidth, `/admin overflows at 390 px: ${JSON.stringify(narrow)}`);
  assert.ok(narrow.tablesInScrollBoxes, 'every table scrolls inside its own box');
  const columns = await page.$$eval('#payments-table table', ([t]) => {
    const box = (cell: any) => {
      const range = cell.ownerDocument.createRange();
      range.selectNodeContents(cell);
      const r = range.getBoundingClientRect();
      return { left: r.left, right: r.right, empty: r.width === 0 };
    };
    const heads = [...t!.querySelectorAll('thead th')];
    return heads.map((th, i) => ({
      label: th.textContent,
      num: th.classList.contains('num'),
      head: box(th),
      cells: [...t!.querySelectorAll(`tbody tr > td:nth-child(${i + 1})`)].map(box).filter((b) => !b.empty),
    }));
  });
  assert.deepEqual(
    columns.filter((c) => c.num).map((c) => c.label),
    ['Count', 'Amount'],
  );
  for (const c of columns) {
    assert.ok(c.cells.length > 0 || c.label === 'Note', `column ${c.label} has values`);
    const edge = c.num ? 'right' : 'left';
    for (const cell of c.cells)
      assert.ok(
        Math.abs(cell[edge] - c.head[edge]) <= 1,
        `${c.label}: value ${edge} edge ${cell[edge]} vs header ${c.head[edge]}`,
      );
  }
  await page.screenshot({ path: SCREENSHOT.replace('.png', '-390.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });

  // The token only ever travelled as a header to the data document, never in a URL.
  assert.ok(
    requested.every((r) => !r.url.includes(ADMIN_TOKEN)),
    'token never in a URL',
  );
  assert.deepEqual(
    [...new Set(requested.filter((r) => r.authorization).map((r) => new URL(r.url).pathname))],
    ['/admin/data.json'],
  );

  // Forgetting the token returns to the form.
  await page.click('#sign-out');
  await page.waitForSelector('body[data-state="login"]');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('isocast.adminToken')), null);

  assert.deepEqual(outside, [], 'the page asked for nothing outside the instance');
  assert.deepEqual(problems, [], 'no console errors (CSP violations included)');
  assert.ok(existsSync(SCREENSHOT));
});
