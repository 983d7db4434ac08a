import { built, type RouteDoc } from '../lib/route-doc.ts';
import { readAssetText } from '../lib/assets.ts';
import { ERRORS, PAYMENT_ERRORS } from '../lib/api-errors.ts';
import { DOCUMENT_PATHS } from './manifests.ts';
import { access, isPaid, numbered, type Offer, SERVICE_NAME, SERVICE_SUMMARY } from './offer.ts';

/** The text documents: the llms.txt family (llmstxt.org), robots.txt and sitemap.xml, from the facts of offer.ts. */

function priceTable(o: Offer): string {
  return [
    '| Tier | from count | unit price (USDC) | total at minimum |',
    '|---|---|---|---|',
    ...o.tiers.map((t) => `| ${t.name} | ${t.minCount} | ${t.unitPriceUsd} | ${t.price} |`),
  ].join('\n');
}

function terms(o: Offer): string {
  return `- Informational only; not financial, investment or betting advice. No guarantee of accuracy; you assume all risk.
- Prediction markets are restricted or illegal in some jurisdictions; comply with your local law.
- Signals are licensed for your own use; resale and redistribution are not permitted.
- Wallets on sanctions lists are refused (403) and never charged.
- Full terms: ${o.termsUrl}`;
}

function stockClient(o: Offer): string {
  const stock = o.anyNonce
    ? `Any x402 v2 client pays this server as is, with the standard exact scheme and its random 32-byte nonce: for example @x402/fetch or @x402/axios with ExactEvmScheme from @x402/evm, @faremeter/fetch with @faremeter/payment-evm, or @dexterai/x402. Every 402 carries the x402 v2 PAYMENT-REQUIRED header (base64 JSON: x402Version 2, resource {url, description, mimeType}, accepts [{scheme, network eip155:8453, amount, asset, payTo, maxTimeoutSeconds, extra {name, version, binding}}]) beside the v1 body; the client pays with PAYMENT-SIGNATURE and reads PAYMENT-RESPONSE. The authorization is bound to the bundle (city, count) of the request it first arrives on: sent again on the same bundle it answers its state, on another it is refused. A refused payment answers 402 with a fresh PAYMENT-REQUIRED and PAYMENT-RESPONSE {success: false, errorReason}. The v1 X-Payment flow still needs the bound nonce (the steps below).`
    : "This server keeps the nonce binding on x402 v2 too (V2_NONCE=bound): a stock client needs isocast's scheme registered for x402 v1 and v2.";
  return filled('public/llms-stock-client.md', { stock }).trimEnd();
}

export function llmsTxt(o: Offer): string {
  const p = o.pricing;
  const link = (title: string, path: string, note: string) => `- [${title}](${o.url(path)}): ${note}`;
  return `# ${SERVICE_NAME}

> ${SERVICE_SUMMARY} A signal is emitted exactly once when a city's observed daily-high temperature crosses from one market bucket into another, with live odds for every bucket.

${o.high.length} cities are covered (their daily-high markets, slug = the city; GET /v1/cities lists them). Each city also has a daily-low stream (${o.low.length} in all, slug = <city>-low, e.g. nyc-low), listed only with GET /v1/cities?kind=low; each stream has one market per city-local day and is bought, read and counted on its own. Signals are sold per city in prepaid bundles (from ${o.from.price} for ${p.minCount} signals; ${p.unitPriceUsd} USDC per signal, less in larger tiers) and paid with x402: a USDC EIP-3009 authorization on Base (${p.network}). On the x402 v1 X-Payment flow the authorization nonce must bind payer, city and count with a salt the 402 challenge serves (the steps below, or the \`isocast buy\` command, do it); ${o.anyNonce ? 'on x402 v2 (PAYMENT-SIGNATURE) any stock x402 client pays with its own random nonce (below).' : 'this server keeps that binding on x402 v2 too (V2_NONCE=bound).'} This instance runs in ${o.paymentMode} payment mode${o.paymentMode === 'mock' ? ' (signatures are verified for real; settlement is simulated and moves no money)' : ''}.

## Prices

${priceTable(o)}

Total = count x the unit price of the largest tier whose minimum is at most count; minimum spend ${p.minSpendUsd} USDC; at most ${p.maxCount} signals per purchase. Settlement wallet: ${p.payTo ?? '(not configured)'}; USDC contract: ${p.asset}.

## How to pay

${numbered(o.steps)}

${stockClient(o)}

## How to read

${numbered(o.reading)}

## Docs

${link('Full manual', DOCUMENT_PATHS.llmsFull, 'everything in one Markdown file: endpoints, fields, errors, code')}
${link('Weather signals', DOCUMENT_PATHS.llmsWeatherSignals, 'the product: what a signal contains, the cities, prices')}
${link('OpenAPI 3.1', DOCUMENT_PATHS.openapi, 'machine description of every route; the signal schema is IsocastSignalPublic')}
${link('API reference', DOCUMENT_PATHS.api, 'the same, for people')}
${link('x402 manifest', DOCUMENT_PATHS.x402, 'paid resources with their x402 accepts')}
${link('Agent card', DOCUMENT_PATHS.agentCard, 'A2A agent card with skills and the x402 requirement')}
${link('Discovery index', DOCUMENT_PATHS.discovery, 'JSON index of every resource and price')}

## Free endpoints

${link('Cities', '/v1/cities', "the daily-high cities with kind, unit, bucket width, timezone, the day's resolution source and station, and latest seq (cached 30 s); ?kind=low lists the daily-low streams instead, ?kind=all both; ?sort=recent puts the newest signal first")}
${link('Sample signal', '/v1/sample', "a city's first signal (?city=<slug>) or a synthetic example")}
${link('Prices', '/v1/signals/meta', 'tiers, network and settlement wallet; ?city=<slug> adds latestSeq')}
${link('Latency', '/v1/stats/latency', "p50/p90/p99 of each step from a station's report to a stored signal (the source's lag, polling, our work), per source and city over 24 h and 7 days (cached 30 s)")}
${link('Health', '/health', 'liveness and payment mode')}
${link('Receipt recovery', '/v1/receipts', 'POST {wallet, origin, timestamp, signature} (EIP-712 ReceiptRequest naming this origin) for a new receipt token')}

## Terms

${terms(o)}

## Optional

${link('Terms (JSON)', '/terms.json', 'version, effective date and summary')}
${link('Sitemap', DOCUMENT_PATHS.sitemap, 'every public document')}
`;
}

function describeParams(given: RouteDoc['query']): string[] {
  if (!given) return [];
  return Object.entries(built(given).shape).map(
    ([name, s]) => `\`${name}\`${s.isOptional() ? ' (optional)' : ''}${s.description ? `: ${s.description}` : ''}`,
  );
}

function endpointReference(o: Offer): string {
  return o.docs
    .map((doc) => {
      const auth =
        access(doc) === 'operator'
          ? 'operator only (admin token)'
          : isPaid(doc)
            ? `paid (${(doc.security ?? []).map((alt) => alt.join('+')).join(' or ')})`
            : 'free';
      const params = [...describeParams(doc.params), ...describeParams(doc.query)];
      const statuses = Object.entries(doc.responses)
        .map(([status, r]) => `  - ${status}: ${r.description}`)
        .join('\n');
      return `### ${doc.method.toUpperCase()} ${doc.path}

${doc.summary}. Access: ${auth}.${doc.description ? `\n\n${doc.description}` : ''}${params.length ? `\n\nParameters: ${params.join('; ')}.` : ''}

Responses:
${statuses}`;
    })
    .join('\n\n');
}

/** A Markdown file of public/ (plain Markdown and code, no escapes) with its {{slot}}s filled. */
const filled = (file: string, slots: Record<string, string>) =>
  readAssetText(file).replace(/\{\{(\w+)\}\}/g, (_, slot: string) => slots[slot]!);

/** The signal's fields and bucket labels, in the two documents that describe a signal. */
const signalFields = () => readAssetText('public/llms-signal-fields.md').trimEnd();

export function llmsWeatherSignals(o: Offer): string {
  const cities = o.high.map((c) => `| ${c.slug} | ${c.displayName} | °${c.unit} | ${c.timezone} |`).join('\n');
  return filled('public/llms-weather-signals.md', {
    sampleUrl: o.url('/v1/sample'),
    signalFields: signalFields(),
    prices: priceTable(o),
    steps: numbered([...o.steps, ...o.reading]),
    cities,
    terms: terms(o),
  });
}

export function llmsFullTxt(o: Offer): string {
  const example = filled('public/llms-example.md', { baseUrl: o.baseUrl }).trimEnd();
  const errors = Object.values(PAYMENT_ERRORS)
    .map((e) => `- \`${e}\``)
    .join('\n');
  return `${llmsTxt(o).trimEnd()}

## Signal fields (IsocastSignalPublic)

${signalFields()}

## Endpoint reference

Every JSON object response, errors included, carries a \`disclaimer\` string. Error bodies are \`{error, ..., disclaimer}\`.

${endpointReference(o)}

## Error strings

${errors}
- \`${ERRORS.payment_identifier_conflict.message}\` (409, an x402 v2 payment-identifier id already used with another payment)
- \`${ERRORS.unknown_city.message}\` (404)

## TypeScript (viem)

${example}

The \`isocast\` binary does the same: \`isocast buy --city nyc --count 20 --key-file key.txt --server ${o.baseUrl}\`, then \`isocast read --city nyc --follow --server ${o.baseUrl}\`.
`;
}

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
export function sitemapXml(o: Offer): string {
  const docs = Object.values(DOCUMENT_PATHS).filter((p) => p !== DOCUMENT_PATHS.robots && p !== DOCUMENT_PATHS.sitemap);
  const free = ['/terms.json', '/v1/cities', '/v1/sample', '/v1/signals/meta'];
  const cities = o.cities.map((c) => `/v1/cities/${encodeURIComponent(c.slug)}`);
  const entries = [...new Set([...docs, '/.well-known/x402.json', ...free, ...cities])]
    .map((p) => `  <url><loc>${escapeXml(o.url(p))}</loc></url>`)
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${entries}
</urlset>
`;
}
