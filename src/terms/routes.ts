import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../lib/http.ts';
import { replyJson } from '../lib/http.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';
import { termsJson, termsText } from './terms.ts';

/** The answer's shape, built on first use (lib/once.ts): only the documents and tests need it. */
export const TermsBody = once(() =>
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

export function termsRoutes(deps: { termsUrl: string }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const text = termsText(deps.termsUrl);
  const json = termsJson(deps.termsUrl);
  const headers = { 'x-terms-url': deps.termsUrl };
  app.get(
    '/terms.txt',
    () => new Response(text, { headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } }),
  );
  app.get('/terms.json', (c) => replyJson(c, json, { headers }));
  return app;
}

const TERMS_HEADERS = { 'X-Terms-URL': 'Terms address' };

export const termsDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/terms.txt',
    tags: ['terms'],
    summary: 'Terms of use (plain text)',
    responses: { 200: { description: 'Terms', contentType: 'text/plain', headers: TERMS_HEADERS } },
  },
  {
    method: 'get',
    path: '/terms.json',
    tags: ['terms'],
    summary: 'Terms version, date and summary',
    responses: { 200: { description: 'Terms', schema: TermsBody, headers: TERMS_HEADERS } },
  },
];
