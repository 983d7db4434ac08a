import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { PaymentRequiredV2Schema } from '@x402/core/schemas';
import {
  bazaarResourceServerExtension,
  declareDiscoveryExtension,
  extractDiscoveryInfo,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
} from '@x402/extensions/bazaar';
import { testApp } from '../helpers/app.ts';
import { startFakeFacilitator } from '../fakes/facilitator.ts';
import { insertSignals } from '../helpers/signals.ts';
import { createFacilitatorSettler } from '../../src/payments/settlers/facilitator.ts';
import { listedSignalsPage, listingFor, schemaOf } from '../../src/payments/bazaar.ts';
import { SYNTHETIC_SAMPLE } from '../../src/signals/schemas.ts';
import { paymentSchemas } from '../../src/payments/schemas.ts';

const { SignalsPage, SignalsQuery, SubscribeQuery, SubscribeResult } = paymentSchemas();
import { buy, buyerA, inApp, signFor } from './buy.ts';

/** Longer descriptions are refused or silently dropped by the CDP catalogue (docs/discovery.md). */
const MAX_LISTING_DESCRIPTION = 450;

/**
 * Issue 28 item 2: both paid routes declare `extensions.bazaar` in their v2 402, built from the
 * same zod schemas as the OpenAPI document, checked with @x402/extensions' own validators, and a
 * v2 settle carries the listing a cataloguing facilitator reads (its own extraction code).
 */
const TERMS = 'http://127.0.0.1:8402/terms';

function v2Of(res: Response): any {
  const decoded = decodePaymentRequiredHeader(res.headers.get('PAYMENT-REQUIRED')!);
  assert.ok(PaymentRequiredV2Schema.safeParse(decoded).success);
  return decoded;
}

test('both paid routes declare a valid Bazaar listing in PAYMENT-REQUIRED, description under 450 characters', async (t) => {
  const e = testApp(t);
  const f = inApp(e.app);
  insertSignals(e.db, 'nyc', 2);
  const answers = {
    '/v1/subscribe': await f('/v1/subscribe?city=nyc&count=20', { method: 'POST' }),
    '/v1/signals': await f('/v1/signals?city=nyc'),
    // The exhaustion 402 of an unrecognised bearer is the same route: the same listing.
    '/v1/signals ': await f('/v1/signals?city=nyc', { headers: { authorization: 'Bearer isr_nope_nope' } }),
  };
  for (const [path, res] of Object.entries(answers)) {
    assert.equal(res.status, 402, path);
    const required = v2Of(res);
    const bazaar = required.extensions.bazaar;
    assert.deepEqual(validateDiscoveryExtension(bazaar), { valid: true }, path);
    assert.deepEqual(validateDiscoveryExtensionSpec(bazaar), { valid: true }, path);
    assert.equal(bazaar.info.input.method, path.startsWith('/v1/subscribe') ? 'POST' : 'GET');
    assert.ok(required.resource.description.length < MAX_LISTING_DESCRIPTION, required.resource.description);
    assert.equal(required.resource.description, listingFor(path.trim(), TERMS)!.description);
    // Beside the payment identifier (and, on the paid read, sign-in-with-x); the v1 body keeps the bundle's own line.
    assert.deepEqual(
      Object.keys(required.extensions).sort(),
      path.startsWith('/v1/signals')
        ? ['bazaar', 'payment-identifier', 'sign-in-with-x']
        : ['bazaar', 'payment-identifier'],
    );
    const body = (await res.json()) as any;
    assert.match(body.accepts[0].description, /^20 isocast signals for nyc/);
    // Small enough for a proxy's response-header buffer, and for a stock client's echo of it.
    assert.ok(
      res.headers.get('PAYMENT-REQUIRED')!.length < 8_192,
      `${path}: ${res.headers.get('PAYMENT-REQUIRED')!.length}`,
    );
  }
  for (const path of ['/v1/signals', '/v1/subscribe']) {
    const d = listingFor(path, TERMS)!.description;
    assert.ok(d.length < MAX_LISTING_DESCRIPTION, `${path}: ${d.length} characters`);
  }
});

test('the declaration is what the library declares and enriches, with the OpenAPI zod schemas', () => {
  const signals = listingFor('/v1/signals', TERMS)!.extensions.bazaar;
  const libSignals = bazaarResourceServerExtension.enrichDeclaration!(
    declareDiscoveryExtension({
      input: { city: 'nyc', count: '20', since: '0' },
      inputSchema: schemaOf(SignalsQuery, 'input'),
      output: { example: (signals.info as any).output.example, schema: schemaOf(listedSignalsPage(), 'output') },
    }).bazaar,
    { method: 'GET', adapter: { getPath: () => '/v1/signals' }, routePattern: '/v1/signals' },
  );
  assert.deepEqual(signals, libSignals);

  const subscribe = listingFor('/v1/subscribe', TERMS)!.extensions.bazaar;
  const lib: any = bazaarResourceServerExtension.enrichDeclaration!(
    declareDiscoveryExtension({
      bodyType: 'json',
      input: {},
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      output: { example: (subscribe.info as any).output.example, schema: schemaOf(SubscribeResult, 'output') },
    }).bazaar,
    { method: 'POST', adapter: { getPath: () => '/v1/subscribe' }, routePattern: '/v1/subscribe' },
  );
  // The library's body declaration has no query parameters; ours are the route's whole input.
  lib.info.input.queryParams = { city: 'nyc', count: '20' };
  lib.schema.properties.input.properties.queryParams = { type: 'object', ...schemaOf(SubscribeQuery, 'input') };
  assert.deepEqual(subscribe, lib);

  // The examples are answers the routes could give (their own zod schemas parse them).
  listedSignalsPage().parse((signals.info as any).output.example);
  // A real answer, provenance fields and all, is one the listing's schema admits.
  const answer = { ...(signals.info as any).output.example, signals: [SYNTHETIC_SAMPLE] };
  assert.deepEqual(listedSignalsPage().parse(answer).signals[0], SYNTHETIC_SAMPLE);
  SignalsPage.parse(answer);
  SubscribeResult.parse((subscribe.info as any).output.example);
  // Self-contained: no reference a catalogue could not resolve.
  assert.doesNotMatch(JSON.stringify([signals, subscribe]), /\$ref/);
});

test('a v2 settle through a facilitator carries the listing its catalogue extracts', async (t) => {
  const fac = await startFakeFacilitator('ok');
  t.after(() => fac.close());
  fac.supported = { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }] };
  const settler = createFacilitatorSettler({ url: fac.url });
  const e = testApp(t, {
    env: {
      PAYMENT_MODE: 'live',
      FEED: 'live',
      PAY_TO: '0x00000000000000000000000000000000000000aa',
      FACILITATOR_URL: fac.url,
      OFAC_REQUIRED: 'false',
    },
    deps: { settler },
  });
  fac.chainTime = () => Math.floor(e.clock.now() / 1000);
  const f = inApp(e.app);
  insertSignals(e.db, 'nyc', 2);
  const bought = await buy(f, buyerA, 'nyc', 20, e.clock.now());
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  // The paid read with an inline payment (a new 402's salt: the first purchase moved it).
  const p = await signFor(f, buyerA, 'nyc', 20, e.clock.now());
  const read = await f('/v1/signals?city=nyc&count=20', { headers: { 'x-payment': p.xPayment } });
  assert.equal(read.status, 200, await read.clone().text());
  const settles = fac.requests.filter((q) => q.path === '/settle');
  assert.equal(settles.length, 2);
  for (const [i, path] of ['/v1/subscribe', '/v1/signals'].entries()) {
    const { paymentPayload, paymentRequirements } = settles[i]!.body;
    const found: any = extractDiscoveryInfo(paymentPayload, paymentRequirements);
    assert.ok(found, `nothing a catalogue could list for ${path}`);
    assert.equal(found.resourceUrl, `http://127.0.0.1:8402${path}`);
    assert.equal(found.method, path === '/v1/signals' ? 'GET' : 'POST');
    assert.equal(found.description, listingFor(path, TERMS)!.description);
    assert.equal(found.x402Version, 2);
    // Only the listing goes to the facilitator: no buyer extension (a payment identifier) rides along.
    assert.deepEqual(Object.keys(paymentPayload.extensions), ['bazaar']);
  }
});
