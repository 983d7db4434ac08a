import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCatalog, wuLocationId } from '../../src/cities/catalog.ts';
import { eventSlugs, eventUrl } from '../../src/cities/market-slug.ts';

test('exactly 37 active cities out of the full catalog, all with a station and a valid zone', () => {
  const c = createCatalog();
  assert.equal(c.active.length, 37);
  assert.ok(c.all.length > 37);
  const slugs = new Set(c.all.map((x) => x.slug));
  assert.equal(slugs.size, c.all.length, 'slugs are unique');
  for (const city of c.active) {
    assert.match(city.station ?? '', /^[A-Z]{4}$/, city.slug);
    assert.doesNotThrow(() => new Intl.DateTimeFormat('en', { timeZone: city.timezone }), city.timezone);
    assert.equal(city.bucketWidth, city.unit === 'F' ? 2 : 1);
    assert.match(city.slug, /^[a-z]+(-[a-z]+)*$/);
    assert.ok(wuLocationId(city));
  }
  assert.equal(c.get('hong-kong'), undefined, 'inactive cities are not served');
  assert.equal(c.get('nyc')?.station, 'KLGA');
  assert.equal(wuLocationId(c.get('nyc')!), 'KLGA:9:US');
  assert.equal(c.get('wellington')?.timezone, 'Pacific/Auckland');
});

test('event slugs in both live forms: full month, unpadded day, optional year', () => {
  assert.deepEqual(eventSlugs('nyc', '2025-12-30'), {
    withYear: 'highest-temperature-in-nyc-on-december-30-2025',
    withoutYear: 'highest-temperature-in-nyc-on-december-30',
  });
  assert.equal(eventSlugs('ankara', '2026-08-20').withYear, 'highest-temperature-in-ankara-on-august-20-2026');
  assert.equal(eventSlugs('los-angeles', '2026-03-05').withoutYear, 'highest-temperature-in-los-angeles-on-march-5');
  assert.equal(eventUrl('x'), 'https://polymarket.com/event/x');
});
