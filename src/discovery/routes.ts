import { Hono } from 'hono';
import { replyJson, type AppEnv } from '../lib/http.ts';
import { serveStaticPage } from '../lib/static-page.ts';
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
/** 16x16 ICO: browsers ask every origin for /favicon.ico, and a 404 there fills logs with noise. */
const FAVICON_ICO: Uint8Array = Uint8Array.from(
  Buffer.from(
    'AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQAAAAIAAAAAEAIAAAAAAAQAQAAAAAAAAAAAAAAAAAAAAAAABfOh8AXzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh8AXzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/GUrm/xlK5v8ZSub/GUrm/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/8ZSub/GUrm/xlK5v8ZSub/GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/8ZSub/GUrm/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof//X19f/19fX/Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H//19fX/9fX1/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//9fX1//X19f9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof//X19f/19fX/Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh8AXzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==',
    'base64',
  ),
);

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

  // The OpenAPI document goes out as built: a root `disclaimer` would make it invalid OpenAPI.
  app.get('/openapi.json', () => text(JSON.stringify(openapi()), 'application/json; charset=utf-8'));
  for (const [path, build, type] of texts) {
    const body = once(() => build(offer()));
    app.get(path, () => text(body(), type));
  }
  for (const [path, body] of json) app.get(path, (c) => replyJson(c, body(), { headers: CACHE }));
  const icon = { 'content-type': 'image/x-icon', 'cache-control': 'public, max-age=86400' };
  app.get('/favicon.ico', () => new Response(FAVICON_ICO, { headers: icon }));
  return app;
}

const doc = (path: string, summary: string, responses: RouteDoc['responses']): RouteDoc => ({
  method: 'get',
  path,
  summary,
  tags: ['discovery'],
  responses,
});
const textDoc = (contentType: string, description: string) => ({ 200: { description, contentType } });
const jsonDoc = (description: string, name: keyof ReturnType<typeof documentSchemas>) => ({
  200: { description, schema: () => documentSchemas()[name] },
});

export const discoveryDocs: RouteDoc[] = [
  doc('/openapi.json', 'This OpenAPI 3.1 document', jsonDoc('OpenAPI 3.1 document', 'OpenApiDocument')),
  doc('/api', 'API reference page for people (renders offline)', textDoc('text/html', 'HTML page')),
  {
    ...doc('/api/assets/{file}', 'Stylesheet and script of the API page', {
      200: { description: 'The asset (text/css or text/javascript)', contentType: 'text/plain' },
      404: { description: 'not found', schema: ErrorBody },
    }),
    params: AssetParams,
  },
  doc('/llms.txt', 'Guide for language models and agents (llmstxt.org)', textDoc('text/plain', 'Markdown')),
  doc('/llms-full.txt', 'The whole manual in one Markdown file', textDoc('text/plain', 'Markdown')),
  doc(
    '/llms/weather-signals',
    'The weather-signals product: fields, cities, prices, buying',
    textDoc('text/markdown', 'Markdown'),
  ),
  doc('/discovery', 'JSON index of every resource and price', jsonDoc('Discovery index', 'DiscoveryIndex')),
  doc(
    '/.well-known/x402',
    'x402 manifest: the paid resources with their accepts',
    jsonDoc('x402 manifest', 'X402Manifest'),
  ),
  doc('/.well-known/x402.json', 'The x402 manifest (same document)', jsonDoc('x402 manifest', 'X402Manifest')),
  doc(
    '/.well-known/agent-card.json',
    'A2A agent card: skills and the x402 payment requirement',
    jsonDoc('Agent card', 'AgentCard'),
  ),
  doc('/robots.txt', 'Crawler rules', textDoc('text/plain', 'robots.txt')),
  doc('/favicon.ico', 'The site icon', textDoc('image/x-icon', 'A 16x16 icon')),
  doc('/sitemap.xml', 'Public documents and city pages', textDoc('application/xml', 'Sitemap')),
];
