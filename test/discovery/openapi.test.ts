import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { testApp } from '../helpers/app.ts';
import { ROUTE_DOCS } from '../../src/app.ts';
import { type Components, toOpenApiSchema } from '../../src/lib/json-schema.ts';
import { z } from 'zod';

type Doc = {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, any>; securitySchemes: Record<string, any> };
  [k: string]: unknown;
};

async function fetchDoc(
  t: Parameters<typeof testApp>[0],
): Promise<{ doc: Doc; text: string; app: ReturnType<typeof testApp>['app'] }> {
  const env = testApp(t);
  const res = await env.app.request('/openapi.json');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const text = await res.text();
  return { doc: JSON.parse(text), text, app: env.app };
}

/** Statuses spec sections 4 and 7 list per route; a route absent from this build is checked by the served-routes test. */
const SPEC_STATUSES: Record<string, number[]> = {
  'get /health': [200],
  'get /v1/cities': [200],
  'get /v1/cities/{slug}': [200, 404],
  'get /v1/sample': [200],
  'get /v1/signals/meta': [200, 404],
  'get /terms.txt': [200],
  'get /terms.json': [200],
  'post /v1/subscribe': [200, 400, 402, 403, 404, 502, 503],
  'get /v1/signals': [200, 402, 403, 404],
  'post /v1/delivery/messenger': [200, 400, 401, 404, 502],
};

test('the served OpenAPI document passes the published OpenAPI 3.1 schema validator', async (t) => {
  const { doc, text } = await fetchDoc(t);
  const validator = new Validator();
  const result = await validator.validate(JSON.parse(text));
  assert.deepEqual(result, { valid: true }, JSON.stringify(result.errors, null, 2));
  assert.equal(validator.version, '3.1');
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.0.0');
  // Every $ref points at a component that exists.
  const refs = [...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(refs.length > 10);
  for (const r of refs) assert.ok(doc.components.schemas[r], `dangling $ref ${r}`);
  assert.doesNotThrow(() => validator.resolveRefs());
  // The declared tags are exactly the ones the operations use.
  const used = new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags)));
  assert.deepEqual(new Set((doc.tags as { name: string }[]).map((tag) => tag.name)), used);
});

test('every route the app serves is in the document, and nothing else', async (t) => {
  const { doc, app } = await fetchDoc(t);
  // `/*` entries are middleware (the body limit, registered per body-carrying method), not routes.
  const served = new Set(
    app.routes
      .filter((r) => r.method !== 'ALL' && r.path !== '/*')
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`),
  );
  const documented = new Set(
    Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m} ${path}`)),
  );
  assert.ok(served.size >= 20, `served ${served.size}`);
  assert.deepEqual(
    [...served].filter((r) => !documented.has(r)),
    [],
    'served but not documented',
  );
  assert.deepEqual(
    [...documented].filter((r) => !served.has(r)),
    [],
    'documented but not served',
  );
});

test('every status of spec sections 4 and 7 is documented with its body', async (t) => {
  const { doc } = await fetchDoc(t);
  for (const [key, statuses] of Object.entries(SPEC_STATUSES)) {
    const [method, path] = key.split(' ') as [string, string];
    const op = doc.paths[path]?.[method];
    if (!op) {
      // Served routes are all documented (test above); an unserved one must not be in ROUTE_DOCS either.
      assert.ok(
        !ROUTE_DOCS.some((d) => d.method === method && d.path === path),
        `${key} documented in ROUTE_DOCS but missing`,
      );
      continue;
    }
    for (const s of statuses) {
      const r = op.responses[String(s)];
      assert.ok(r, `${key}: status ${s} missing`);
      const media = Object.values(r.content ?? {})[0] as { schema?: unknown } | undefined;
      assert.ok(media?.schema, `${key} ${s}: no body schema`);
    }
    for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
      if (!r.content?.['application/json']) continue;
      const schema = r.content['application/json'].schema;
      const resolve = (s: any) => (s.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
      for (const branch of schema.anyOf ?? [schema]) {
        const resolved = resolve(branch);
        assert.ok(
          resolved.properties?.disclaimer || resolved.properties?.['x-disclaimer'],
          `${key} ${status}: body without disclaimer`,
        );
      }
    }
  }
});

test('security schemes, the named signal schema and parameters', async (t) => {
  const { doc } = await fetchDoc(t);
  assert.deepEqual(doc.components.securitySchemes.x402, {
    ...doc.components.securitySchemes.x402,
    type: 'apiKey',
    in: 'header',
    name: 'X-Payment',
  });
  assert.deepEqual(doc.components.securitySchemes.x402v2, {
    ...doc.components.securitySchemes.x402v2,
    type: 'apiKey',
    in: 'header',
    name: 'PAYMENT-SIGNATURE',
  });
  assert.deepEqual(doc.components.securitySchemes.siwx, {
    ...doc.components.securitySchemes.siwx,
    type: 'apiKey',
    in: 'header',
    name: 'SIGN-IN-WITH-X',
  });
  assert.match(
    doc.paths['/v1/signals']!.get.responses['402'].headers['PAYMENT-REQUIRED'].description,
    /sign-in-with-x/,
  );
  for (const [path, method] of [
    ['/v1/subscribe', 'post'],
    ['/v1/signals', 'get'],
  ] as const) {
    const r = doc.paths[path]![method].responses;
    assert.ok(r['402'].headers['PAYMENT-REQUIRED'], `${path} 402 names PAYMENT-REQUIRED`);
    assert.ok(r['200'].headers['PAYMENT-RESPONSE'], `${path} 200 names PAYMENT-RESPONSE`);
  }
  assert.equal(doc.components.securitySchemes.receipt.type, 'http');
  assert.equal(doc.components.securitySchemes.receipt.scheme, 'bearer');
  assert.equal(doc.components.securitySchemes.receipt.bearerFormat, 'isocast-receipt');
  const signal = doc.components.schemas.IsocastSignalPublic;
  assert.ok(signal, 'IsocastSignalPublic component');
  assert.deepEqual(signal.required, [
    'city',
    'displayName',
    'seq',
    'targetDate',
    'marketUrl',
    'conditionId',
    'old',
    'new',
    'buckets',
    'bucketsAsOf',
    'source',
    'observedAt',
    'reportedAt',
    'channel',
    'rawReport',
    'reportedValue',
    'reportedUnit',
    'reportedPrecision',
    'availableAt',
    'storedAt',
  ]);
  assert.equal(signal.properties.old.$ref, '#/components/schemas/Reading');
  const city = doc.paths['/v1/cities/{slug}']!.get;
  assert.deepEqual(
    city.parameters.map((p: any) => [p.name, p.in, p.required]),
    [['slug', 'path', true]],
  );
  assert.deepEqual(doc.paths['/health']!.get.security, []);
  if (doc.paths['/v1/signals']) {
    const sig = doc.paths['/v1/signals'].get;
    assert.deepEqual(sig.security.map((s: object) => Object.keys(s)[0]).sort(), ['receipt', 'siwx', 'x402', 'x402v2']);
    assert.ok(
      JSON.stringify(sig.responses['200']).includes('SignalsPage') ||
        JSON.stringify(doc.components.schemas).includes('IsocastSignalPublic'),
    );
    const query = Object.fromEntries(sig.parameters.map((p: any) => [p.name, p]));
    assert.equal(query.city.required, true);
  }
  assert.equal(typeof doc['x-disclaimer'], 'string');
});

test('input and output variants of one named schema become two components', () => {
  const Thing = z.object({ n: z.number().default(1) }).meta({ id: 'Thing' });
  const components: Components = new Map();
  toOpenApiSchema(Thing, 'input', components);
  toOpenApiSchema(Thing, 'output', components);
  const schemas = Object.fromEntries(components) as any;
  assert.deepEqual(Object.keys(schemas).sort(), ['Thing', 'ThingInput']);
  assert.deepEqual(schemas.Thing.required, ['n']);
  assert.equal(schemas.ThingInput.required, undefined);
});

test('a schema whose nested part differs on input is renamed with it', () => {
  const Inner = z.object({ n: z.number().default(1) }).meta({ id: 'Inner' });
  const Outer = z.object({ inner: Inner }).meta({ id: 'Outer' });
  const components: Components = new Map();
  const body = toOpenApiSchema(Outer, 'input', components);
  toOpenApiSchema(Outer, 'output', components);
  const schemas = Object.fromEntries(components) as any;
  assert.equal(schemas.Outer.properties.inner.$ref, '#/components/schemas/Inner');
  assert.equal(schemas.OuterInput.properties.inner.$ref, '#/components/schemas/InnerInput');
  assert.equal(body.$ref, '#/components/schemas/OuterInput');
});

test('a 402 documents both the challenge and the failure body', async (t) => {
  const { doc } = await fetchDoc(t);
  for (const [path, method] of [
    ['/v1/subscribe', 'post'],
    ['/v1/signals', 'get'],
  ] as const) {
    const schema = doc.paths[path]![method].responses['402'].content['application/json'].schema;
    const names = schema.anyOf.map((s: any) => s.$ref?.split('/').pop());
    assert.ok(names.includes('PaymentRequired'), `${path}: ${names}`);
    assert.ok(names.includes('SettlementFailed'), `${path}: ${names}`);
  }
});

test('every paid operation carries x-payment-info (price per tier, network, asset, payTo); free ones do not', async (t) => {
  const { doc } = await fetchDoc(t);
  const paid: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      const isPaid = (op.security ?? []).some((alt: Record<string, unknown>) => 'x402' in alt);
      assert.equal('x-payment-info' in op, isPaid, `${method} ${path}`);
      if (!isPaid) continue;
      paid.push(`${method} ${path}`);
      const info = op['x-payment-info'];
      assert.equal(info.network, 'eip155:8453');
      assert.equal(info.asset, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
      assert.equal(info.payTo, '0x000000000000000000000000000000000000dEaD');
      assert.deepEqual([info.pricingMode, info.minPrice, info.maxPrice], ['range', '0.010000', '35.000000']);
      assert.deepEqual(info.protocols, [
        { x402: { version: 1, scheme: 'exact', network: info.network, asset: info.asset, payTo: info.payTo } },
      ]);
      assert.deepEqual(
        info.tiers.map((x: any) => [x.name, x.minCount, x.unitPriceUsd, x.from]),
        [
          ['Min', 2, 0.005, '$0.01'],
          ['Starter', 20, 0.005, '$0.10'],
          ['Standard', 100, 0.0045, '$0.45'],
          ['Pro', 500, 0.004, '$2.00'],
          ['Whale', 2000, 0.0035, '$7.00'],
        ],
      );
    }
  assert.deepEqual(paid.sort(), ['get /v1/signals', 'post /v1/subscribe']);
});
