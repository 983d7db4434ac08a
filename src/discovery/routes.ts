import { Hono } from 'hono';
import { replyJson, type AppEnv } from '../lib/http.ts';
import { serveStaticPage } from '../lib/static-page.ts';
import { readAssetBytes } from '../lib/assets.ts';
import { once } from '../lib/once.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { ErrorBody } from '../lib/schemas.ts';
import { buildOpenApi } from './openapi.ts';
import { agentCard, discoveryIndex, x402Manifest } from './manifests.ts';
import { llmsFullTxt, llmsTxt, llmsWeatherSignals, robotsTxt, sitemapXml } from './llms.ts';
import { type DiscoveryDeps, type Offer, offerOf } from './offer.ts';
import { AssetParams, documentSchemas } from './schemas.ts';

/** Spec 4.1's discovery addresses; each document is built once, on first request. */
const TEXT = 'text/plain; charset=utf-8';
const CACHE = { 'cache-control': 'public, max-age=300' };

export function discoveryRoutes(d: DiscoveryDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  serveStaticPage(app, { path: '/api', name: 'api', headers: CACHE });
  const offer = once(() => offerOf(d));
  const openapi = once(() => buildOpenApi(offer()));
  const manifest = once(() => x402Manifest(offer()));
  const json: [string, () => object][] = [
    ['/discovery', once(() => discoveryIndex(offer()))],
    ['/.well-known/x402', manifest],
    ['/.well-known/x402.json', manifest],
    ['/.well-known/agent-card.json', once(() => agentCard(offer()))],
  ];
  const texts: [string, (o: Offer) => string, string][] = [
    ['/llms.txt', llmsTxt, TEXT],
    ['/llms-full.txt', llmsFullTxt, TEXT],
    ['/llms/weather-signals', llmsWeatherSignals, 'text/markdown; charset=utf-8'],
    ['/robots.txt', robotsTxt, TEXT],
    ['/sitemap.xml', sitemapXml, 'application/xml; charset=utf-8'],
  ];
  const text = (body: string, type: string) => new Response(body, { headers: { 'content-type': type, ...CACHE } });

  app.get('/openapi.json', () => text(JSON.stringify(openapi()), 'application/json; charset=utf-8'));
  for (const [path, build, type] of texts) {
    const body = once(() => build(offer()));
    app.get(path, () => text(body(), type));
  }
  for (const [path, body] of json) app.get(path, (c) => replyJson(c, body(), { headers: CACHE }));
  // Browsers ask every origin for /favicon.ico, and a 404 there fills logs with noise.
  const icon = new Uint8Array(readAssetBytes('public/favicon.ico'));
  const iconHeaders = { 'content-type': 'image/x-icon', 'cache-control': 'public, max-age=86400' };
  app.get('/favicon.ico', () => new Response(icon, { headers: iconHeaders }));
  return app;
}

/** [path, summary, the 200's description, its content type or the name of the JSON document's schema]. */
const DOCUMENTS: [string, string, string, string][] = [
  ['/openapi.json', 'This OpenAPI 3.1 document', 'OpenAPI 3.1 document', 'OpenApiDocument'],
  ['/api', 'API reference page for people (renders offline)', 'HTML page', 'text/html'],
  [
    '/api/assets/{file}',
    'Stylesheet and script of the API page',
    'The asset (text/css or text/javascript)',
    'text/plain',
  ],
  ['/llms.txt', 'Guide for language models and agents (llmstxt.org)', 'Markdown', 'text/plain'],
  ['/llms-full.txt', 'The whole manual in one Markdown file', 'Markdown', 'text/plain'],
  ['/llms/weather-signals', 'The weather-signals product: fields, cities, prices, buying', 'Markdown', 'text/markdown'],
  ['/discovery', 'JSON index of every resource and price', 'Discovery index', 'DiscoveryIndex'],
  ['/.well-known/x402', 'x402 manifest: the paid resources with their accepts', 'x402 manifest', 'X402Manifest'],
  ['/.well-known/x402.json', 'The x402 manifest (same document)', 'x402 manifest', 'X402Manifest'],
  [
    '/.well-known/agent-card.json',
    'A2A agent card: skills and the x402 payment requirement',
    'Agent card',
    'AgentCard',
  ],
  ['/robots.txt', 'Crawler rules', 'robots.txt', 'text/plain'],
  ['/favicon.ico', 'The site icon', 'A 16x16 icon', 'image/x-icon'],
  ['/sitemap.xml', 'Public documents and city pages', 'Sitemap', 'application/xml'],
];

export const discoveryDocs = DOCUMENTS.map(([path, summary, description, body]): RouteDoc => {
  const ok = body.includes('/')
    ? { description, contentType: body }
    : { description, schema: () => documentSchemas()[body as keyof ReturnType<typeof documentSchemas>] };
  const doc: RouteDoc = { method: 'get', path, summary, tags: ['discovery'], responses: { 200: ok } };
  if (path !== '/api/assets/{file}') return doc;
  return { ...doc, params: AssetParams, responses: { 200: ok, 404: { description: 'not found', schema: ErrorBody } } };
});
