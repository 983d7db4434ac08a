import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.ts';
import { createCatalog } from '../../src/cities/catalog.ts';
import { resolutionFor } from '../../src/cities/routes.ts';
import { KIND_RULES } from '../../src/buckets/daily-high.ts';
import { MarketResolution } from '../../src/cities/schemas.ts';
import { listingFor } from '../../src/payments/bazaar.ts';
import type { DayRule } from '../../src/resolution/store.ts';

/**
 * Each market's resolution metadata (issue 37 item 2): station, unit, rule kind, rounding,
 * resolution source and page, in GET /v1/cities/{slug}, in the OpenAPI document (with an example)
 * and in the Bazaar output schema of the purchase, so an agent can judge a signal before paying.
 */
const catalog = createCatalog();
/** The example the OpenAPI document shows, as the schema carries it. */
const RESOLUTION_EXAMPLE = (MarketResolution().meta()!.examples as Record<string, unknown>[])[0]!;
const rule = (over: Partial<DayRule>): DayRule => ({
  city: 'nyc',
  targetDate: '2026-07-15',
  source: 'noaa',
  kind: 'noaa-hourly',
  station: 'KLGA',
  unit: 'F',
  precision: 1,
  fallback: null,
  url: 'https://www.weather.gov/wrh/timeseries?site=KLGA',
  status: 'ok',
  reason: null,
  observedWith: 'metar',
  ...over,
});
/** A served city's metadata through the purchase's own lookup, with the day rule the poller would have read. */
const metadata = (slug: string, dayRule: DayRule | null = null) => resolutionFor(catalog, () => dayRule)(slug)!;

test('the catalog gives the metadata until the day rule is read, then the rule does', () => {
  assert.deepEqual(metadata('nyc'), RESOLUTION_EXAMPLE, 'the documented example is what nyc serves');
  assert.deepEqual(metadata('nyc', rule({})), {
    station: 'KLGA',
    unit: 'F',
    ruleKind: 'noaa-hourly',
    rounding: 'half-up',
    roundingRule: 'routine hourly METARs only (SPECIs are not in the hourly view), whole degrees half-up',
    resolutionSource: 'noaa',
    resolutionUrl: 'https://www.weather.gov/wrh/timeseries?site=KLGA',
    bucketWidth: 2,
    from: 'market-rule',
  });
  const hk = catalog.active.find((c) => c.resolutionSource === 'hko');
  if (hk) {
    const m = metadata(hk.slug);
    assert.deepEqual([m.ruleKind, m.rounding, m.unit], ['hko', 'floor-tenth', 'C']);
  }
  for (const c of catalog.active) MarketResolution().parse(metadata(c.slug));
});

test('GET /v1/cities/{slug} serves it; the OpenAPI document and the Bazaar purchase schema describe it', async (t) => {
  const env = testApp(t, { deps: { ruleFor: (c) => (c.slug === 'nyc' ? rule({}) : null) } });
  const nyc = (await (await env.app.request('/v1/cities/nyc')).json()) as any;
  assert.equal(nyc.resolutionMetadata.from, 'market-rule');
  assert.equal(nyc.resolutionMetadata.ruleKind, 'noaa-hourly');
  const chi = (await (await env.app.request('/v1/cities/chicago')).json()) as any;
  assert.deepEqual([chi.resolutionMetadata.station, chi.resolutionMetadata.from], ['KORD', 'catalog']);

  const doc = (await (await env.app.request('/openapi.json')).json()) as any;
  const schemas = doc.components.schemas;
  assert.equal(schemas.CityDetail.properties.resolutionMetadata.$ref, '#/components/schemas/MarketResolution');
  assert.deepEqual(schemas.MarketResolution.examples, [RESOLUTION_EXAMPLE]);
  assert.ok(JSON.stringify(schemas.SubscribeResult).includes('MarketResolution'));

  const declared = listingFor('/v1/subscribe', env.config.TERMS_URL)!.extensions.bazaar.schema as any;
  const output = declared.properties.output.properties.example.properties.resolutionMetadata;
  assert.deepEqual(Object.keys(output.properties).sort(), Object.keys(RESOLUTION_EXAMPLE).sort());
  assert.deepEqual(output.properties.ruleKind.enum, Object.keys(KIND_RULES));
});
