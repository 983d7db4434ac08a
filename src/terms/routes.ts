import { Hono } from 'hono';
import { z } from 'zod';
import { replyJson, type AppEnv } from '../lib/http.ts';
import { type RouteDoc, routeDoc } from '../lib/route-doc.ts';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';
import { readAssetText } from '../lib/assets.ts';

/** The answer's shape, built on first use (lib/once.ts): only the documents and tests need it. */
const TermsBody = once(() =>
  z
    .object({
      version: z.string(),
      effectiveDate: z.string(),
      url: z.url(),
      summary: z.array(z.string()),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'Terms' }),
);

const TERMS_SUMMARY = [
  'Signals and all other data are informational only and are not financial, investment, trading or betting advice.',
  'No guarantee of accuracy, completeness, timeliness or availability; observations and odds come from third parties and may be late or wrong.',
  'You assume all risk of any decision or trade you make; the operator is not liable for losses.',
  'Prediction markets are restricted or prohibited in some jurisdictions; you are responsible for complying with the law where you are.',
  'Signals are licensed for your own use only; resale, redistribution or republication is not permitted.',
  'Payments are final once settled, except that a payment the service could not apply is refunded.',
  'Wallets on sanctions lists may not use the paid service.',
  'These terms are a draft and may change; the version and effective date identify the text you accepted.',
];

export function termsRoutes(deps: { termsUrl: string }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const json = { version: '0.1.0-draft', effectiveDate: '2026-11-21', url: deps.termsUrl, summary: TERMS_SUMMARY };
  // The legal text is public/terms.txt, with the JSON's version, date and address filled in.
  const fill = (_: string, field: 'version' | 'effectiveDate' | 'url') => json[field];
  const text = readAssetText('public/terms.txt').replace(/\{(version|effectiveDate|url)\}/g, fill);
  const headers = { 'x-terms-url': deps.termsUrl };
  const textHeaders = { 'content-type': 'text/plain; charset=utf-8', ...headers };
  app.get('/terms.txt', () => new Response(text, { headers: textHeaders }));
  app.get('/terms.json', (c) => replyJson(c, json, { headers }));
  return app;
}

const termsDoc = (path: `/${string}`, summary: string, response: RouteDoc['responses'][number]) =>
  routeDoc(`get ${path}`, 'terms', {
    summary,
    responses: { 200: { ...response, headers: { 'X-Terms-URL': 'Terms address' } } },
  });

export const termsDocs: RouteDoc[] = [
  termsDoc('/terms.txt', 'Terms of use (plain text)', { description: 'Terms', contentType: 'text/plain' }),
  termsDoc('/terms.json', 'Terms version, date and summary', { description: 'Terms', schema: TermsBody }),
];
