import { DOCUMENT_PATHS } from './manifests.ts';
import type { Offer } from './offer.ts';

/** The paid and wallet-signed routes are disallowed: a crawler can only ever get a 402 or a 400 there. */
export function robotsTxt(o: Offer): string {
  return `# ${o.baseUrl}: isocast. Agents: start at ${o.url(DOCUMENT_PATHS.llms)}
User-agent: *
Allow: /
Disallow: /v1/subscribe
Disallow: /v1/signals$
Disallow: /v1/signals?
Disallow: /v1/delivery/
Disallow: /metrics
Disallow: /admin

Sitemap: ${o.url(DOCUMENT_PATHS.sitemap)}
`;
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const escapeXml = (s: string) => s.replace(/[&<>"']/g, (ch) => XML_ESCAPES[ch]!);

/** Every public document, the free city pages and the terms. */
function sitemapPaths(o: Offer): string[] {
  const docs = Object.values(DOCUMENT_PATHS).filter((p) => p !== DOCUMENT_PATHS.robots && p !== DOCUMENT_PATHS.sitemap);
  const served = new Set(o.docs.map((doc) => doc.path));
  const free = ['/terms.json', '/v1/cities', '/v1/sample', '/v1/signals/meta'].filter((p) => served.has(p));
  const cities = served.has('/v1/cities/{slug}') ? o.cities.map((c) => `/v1/cities/${encodeURIComponent(c.slug)}`) : [];
  return [...new Set([...docs, '/.well-known/x402.json', ...free, ...cities])];
}

export function sitemapXml(o: Offer): string {
  const entries = sitemapPaths(o)
    .map((p) => `  <url><loc>${escapeXml(o.url(p))}</loc></url>`)
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${entries}
</urlset>
`;
}
