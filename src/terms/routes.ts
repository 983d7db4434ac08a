import { Hono } from 'hono';
import { z } from 'zod';
import { replyJson, type AppEnv } from '../lib/http.ts';
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
  const textHeaders = { 'content-type': 'text/plain; charset=utf-8', ...headers };
  app.get('/terms.txt', () => new Response(text, { headers: textHeaders }));
  app.get('/terms.json', (c) => replyJson(c, json, { headers }));
  return app;
}

const termsDoc = (path: string, summary: string, response: RouteDoc['responses'][number]): RouteDoc => ({
  method: 'get',
  path,
  tags: ['terms'],
  summary,
  responses: { 200: { ...response, headers: { 'X-Terms-URL': 'Terms address' } } },
});

export const termsDocs: RouteDoc[] = [
  termsDoc('/terms.txt', 'Terms of use (plain text)', { description: 'Terms', contentType: 'text/plain' }),
  termsDoc('/terms.json', 'Terms version, date and summary', { description: 'Terms', schema: TermsBody }),
];
