import { z } from 'zod';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.ts';
import { ROUTE_DOCS } from '../../src/app.ts';
import { documentSchemas } from '../../src/discovery/schemas.ts';
import { BINDING_FORMULA } from '../../packages/isocast-client/src/binding.ts';
import { offeredAccept } from '../../src/payments/envelope.ts';

const { AgentCard, DiscoveryIndex, X402Manifest } = documentSchemas();

const BASE = 'http://127.0.0.1:8402';

type Scenario = { path: string; type: RegExp; check: (body: string) => void };

const json = (check: (b: any) => void) => (text: string) => {
  const b = JSON.parse(text);
  assert.equal(typeof b.disclaimer, 'string');
  assert.match(b.disclaimer, /not financial/);
  check(b);
};

const scenarios: Scenario[] = [
  {
    path: '/llms.txt',
    type: /^text\/plain; charset=utf-8$/,
    check: (t) => {
      assert.match(t, /^# isocast\n\n> /, 'llmstxt.org: H1 then a blockquote summary');
      for (const s of [
        '$0.01',
        '$0.10',
        '$0.45',
        '$2.00',
        '$7.00',
        BINDING_FORMULA,
        'extra.binding.salt',
        'TransferWithAuthorization',
        'X-Payment',
        'Authorization: Bearer',
        'next_cursor',
        'paid_through',
        `${BASE}/terms.txt`,
        'resale and redistribution',
      ]) {
        assert.ok(t.includes(s), `llms.txt mentions ${s}`);
      }
      assert.match(t, /^## Optional$/m);
      assert.match(t, /^- \[Full manual\]\(http:\/\/127\.0\.0\.1:8402\/llms-full\.txt\): /m);
    },
  },
  {
    path: '/llms-full.txt',
    type: /^text\/plain; charset=utf-8$/,
    check: (t) => {
      for (const d of ROUTE_DOCS)
        assert.ok(t.includes(`### ${d.method.toUpperCase()} ${d.path}\n`), `manual covers ${d.method} ${d.path}`);
      for (const s of [
        'payment binding mismatch: nonce must bind (payer, city, count)',
        'wallet is sanctioned; payment refused',
        'unknown city',
        'IsocastSignalPublic',
        'bucketsAsOf',
        "encodePacked(['address', 'string', 'uint256', 'bytes32']",
      ])
        assert.ok(t.includes(s), s);
    },
  },
  {
    path: '/llms/weather-signals',
    type: /^text\/markdown; charset=utf-8$/,
    check: (t) => {
      assert.match(t, /^# isocast weather signals\n\n> /);
      assert.equal(
        t.split('\n').filter((l) => /^\| [a-z-]+ \| .+ \| °[CF] \| [A-Za-z_]+\/[A-Za-z_/-]+ \|$/.test(l)).length,
        37,
        '37 city rows',
      );
      assert.ok(t.includes('max(ceiling, latestSeq) + count'));
    },
  },
  {
    path: '/discovery',
    type: /^application\/json/,
    check: json((b) => {
      DiscoveryIndex.parse(b);
      const listed = new Set(b.resources.map((r: any) => `${r.method} ${r.path}`));
      for (const d of ROUTE_DOCS) assert.ok(listed.has(`${d.method.toUpperCase()} ${d.path}`), `${d.path} listed`);
      assert.equal(b.cities.count, 37);
      assert.equal(b.pricing.tiers.length, 5);
      assert.equal(b.payment.receipt.bearerFormat, 'isocast-receipt');
      const subscribe = b.resources.find((r: any) => r.path === '/v1/subscribe');
      assert.equal(subscribe.access, 'paid');
      assert.equal(subscribe.price.from, '$0.01');
      assert.equal(b.resources.find((r: any) => r.path === '/v1/signals').access, 'paid-or-receipt');
      assert.equal(b.resources.find((r: any) => r.path === '/v1/cities').access, 'free');
      assert.equal(
        b.resources.find((r: any) => r.path === '/metrics').access,
        'operator',
        'operator routes are not listed as free',
      );
      assert.equal(b.resources.find((r: any) => r.path === '/admin/data.json').access, 'operator');
    }),
  },
  ...['/.well-known/x402', '/.well-known/x402.json'].map(
    (path): Scenario => ({
      path,
      type: /^application\/json/,
      check: json((b) => {
        X402Manifest.parse(b);
        assert.deepEqual(b.resources, [`${BASE}/v1/subscribe`, `${BASE}/v1/signals`]);
        // The discovery document as x402scan and agentcash validate it before reading anything.
        z.object({
          version: z.literal(1),
          resources: z.array(z.url()),
          ownershipProofs: z.array(z.string()).optional(),
          instructions: z.string().optional(),
        }).parse(b);
        assert.match(
          b.instructions,
          new RegExp(`- POST ${BASE}/v1/subscribe\\?city=<slug>&count=<n>: .*from \\$0\\.01 for 2`),
        );
        assert.match(
          b.instructions,
          new RegExp(`- GET ${BASE}/v1/signals\\?city=<slug>&since=<cursor>: .*2\\+ at \\$0\\.005`),
        );
        assert.match(b.instructions, /## Pay\n\n1\. Pick a city slug/);
        assert.match(b.instructions, /## Read again \(no new payment\)\n\n1\. GET /);
        assert.deepEqual(
          b.items.map((i: any) => [i.method, i.price.from, i.price.tiers.length]),
          [
            ['POST', '$0.01', 5],
            ['GET', '$0.01', 5],
          ],
        );
        const sub = b.items.find((i: any) => i.method === 'POST');
        assert.deepEqual(
          sub.accepts.map((a: any) => [a.extra.tier, a.extra.count, a.price, a.maxAmountRequired]),
          [
            ['Min', 2, '$0.01', '10000'],
            ['Starter', 20, '$0.10', '100000'],
            ['Standard', 100, '$0.45', '450000'],
            ['Pro', 500, '$2.00', '2000000'],
            ['Whale', 2000, '$7.00', '7000000'],
          ],
        );
        for (const a of sub.accepts) {
          assert.equal(a.payTo, '0x000000000000000000000000000000000000dEaD');
          assert.equal(a.asset, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
          assert.equal(a.extra.binding.formula, BINDING_FORMULA);
        }
      }),
    }),
  ),
  {
    path: '/.well-known/agent-card.json',
    type: /^application\/json/,
    check: json((b) => {
      AgentCard.parse(b);
      assert.equal(b.name, 'isocast');
      assert.equal(b.url, BASE);
      assert.equal(b.version, '1.0.0');
      const ext = b.capabilities.extensions.find((e: any) => /x402/.test(e.uri));
      assert.equal(ext.required, true);
      assert.equal(ext.params.accepts.length, 5);
      const skills = b.skills.map((s: any) => s.id);
      for (const id of ['buy-weather-signals', 'read-weather-signals', 'list-cities', 'sample-and-prices'])
        assert.ok(skills.includes(id), id);
      assert.equal(
        skills.includes('chat-delivery'),
        ROUTE_DOCS.some((d) => d.path === '/v1/delivery/messenger'),
      );
      assert.equal(b.securitySchemes.receipt.bearerFormat, 'isocast-receipt');
    }),
  },
  {
    path: '/robots.txt',
    type: /^text\/plain; charset=utf-8$/,
    check: (t) => {
      assert.match(t, /^User-agent: \*$/m);
      assert.match(t, /^Disallow: \/v1\/subscribe$/m);
      assert.match(t, /^Sitemap: http:\/\/127\.0\.0\.1:8402\/sitemap\.xml$/m);
      assert.doesNotMatch(t, /^Disallow: \/v1\/signals\/?$/m, 'the free /v1/signals/meta stays crawlable');
    },
  },
  {
    path: '/sitemap.xml',
    type: /^application\/xml; charset=utf-8$/,
    check: (t) => {
      assert.match(
        t,
        /^<\?xml version="1.0" encoding="UTF-8"\?>\n<urlset xmlns="http:\/\/www.sitemaps.org\/schemas\/sitemap\/0.9">/,
      );
      const locs = [...t.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]!);
      assert.equal(new Set(locs).size, locs.length, 'no duplicates');
      for (const p of [
        '/llms.txt',
        '/openapi.json',
        '/api',
        '/v1/cities',
        '/v1/cities/nyc',
        '/.well-known/agent-card.json',
      ])
        assert.ok(locs.includes(BASE + p), p);
      assert.ok(!locs.some((l) => /subscribe|\/v1\/signals$/.test(l)), 'no paid routes');
    },
  },
  {
    path: '/api',
    type: /^text\/html; charset=utf-8$/,
    check: (t) => {
      assert.match(t, /<script src="api\/assets\/api.js" defer><\/script>/);
      assert.doesNotMatch(t, /(src|href)="(https?:)?\/\//, 'no external assets');
    },
  },
  { path: '/api/assets/api.js', type: /^text\/javascript/, check: (t) => assert.match(t, /fetch\('openapi.json'\)/) },
  {
    path: '/api/assets/api.css',
    type: /^text\/css/,
    check: (t) => assert.doesNotMatch(t, /url\(|@import/, 'no external fonts or images'),
  },
];

test('discovery addresses answer with the right content type and real content', async (t) => {
  const env = testApp(t);
  for (const s of scenarios) {
    const res = await env.app.request(s.path);
    assert.equal(res.status, 200, s.path);
    assert.match(res.headers.get('content-type') ?? '', s.type, `${s.path} content type`);
    s.check(await res.text());
  }
  const missing = await env.app.request('/api/assets/secret.txt');
  assert.equal(missing.status, 404);
  assert.equal(typeof ((await missing.json()) as any).disclaimer, 'string');
  const head = await env.app.request('/llms.txt', { method: 'HEAD' });
  assert.equal(head.status, 200);
  const csp = (await env.app.request('/api')).headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /connect-src 'self'/);
  // The site icon: a real ICO (reserved 0, type 1, one 16x16 image), cached for a day.
  const icon = await env.app.request('/favicon.ico');
  assert.equal(icon.status, 200);
  assert.equal(icon.headers.get('content-type'), 'image/x-icon');
  assert.match(icon.headers.get('cache-control') ?? '', /max-age=86400/);
  const ico = Buffer.from(await icon.arrayBuffer());
  assert.deepEqual([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4), ico[6], ico[7]], [0, 1, 1, 16, 16]);
  assert.equal(ico.readUInt32LE(14) + ico.readUInt32LE(18), ico.length, 'the image fills the file');
});

test('the x402 manifest agrees with the live 402 challenge', async (t) => {
  const env = testApp(t);
  const manifest = (await (await env.app.request('/.well-known/x402')).json()) as any;
  const challengeRes = await env.app.request('/v1/subscribe?city=nyc&count=20', { method: 'POST' });
  assert.equal(challengeRes.status, 402);
  const live = ((await challengeRes.json()) as any).accepts[0];
  const starter = manifest.items.find((i: any) => i.method === 'POST').accepts.find((a: any) => a.extra.count === 20);
  for (const k of [
    'scheme',
    'network',
    'price',
    'payTo',
    'mimeType',
    'maxAmountRequired',
    'asset',
    'maxTimeoutSeconds',
  ]) {
    assert.deepEqual(starter[k], live[k], k);
  }
  assert.equal(starter.extra.name, live.extra.name);
  assert.equal(starter.extra.version, live.extra.version);
  assert.equal(starter.extra.binding.formula, live.extra.binding.formula);
  assert.equal(new URL(live.resource).pathname, new URL(starter.resource).pathname);
});

test('documents follow the configured addresses and settlement wallet', async (t) => {
  const env = testApp(t, {
    env: { BASE_URL: 'https://signals.example', PAY_TO: '0x1111111111111111111111111111111111111111' },
  });
  const card = (await (await env.app.request('/.well-known/agent-card.json')).json()) as any;
  assert.equal(card.url, 'https://signals.example');
  assert.equal(card.capabilities.extensions[0].params.accepts[0].payTo, '0x1111111111111111111111111111111111111111');
  const llms = await (await env.app.request('/llms.txt')).text();
  assert.ok(llms.includes('https://signals.example/v1/subscribe'));
  assert.ok(llms.includes('https://signals.example/terms.txt'));
  const doc = (await (await env.app.request('/openapi.json')).json()) as any;
  assert.deepEqual(doc.servers, [{ url: 'https://signals.example' }]);
});

test("the manifest's accepts entries are the 402 envelope's own builder output (payments/envelope.ts offeredAccept)", async (t) => {
  const env = testApp(t);
  const manifest = (await (await env.app.request('/.well-known/x402')).json()) as any;
  const sub = manifest.items.find((i: any) => i.method === 'POST');
  for (const a of sub.accepts) {
    const built = offeredAccept(
      { count: a.extra.count, resource: a.resource, payTo: a.payTo, usdc: a.asset, description: a.description },
      { tier: a.extra.tier, count: a.extra.count, mode: a.extra.mode, binding: a.extra.binding },
    );
    // Same keys in the same order, same values: the document is the builder's, not a re-listing.
    assert.equal(JSON.stringify(a), JSON.stringify(built), a.extra.tier);
  }
});
