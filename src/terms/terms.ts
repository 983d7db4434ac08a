import { readAssetText } from '../lib/assets.ts';

/** Terms of use (a draft) and the disclaimer every JSON object response carries, built from TERMS_URL once at start. */
const TERMS_VERSION = '0.1.0-draft';
const TERMS_EFFECTIVE_DATE = '2026-11-21';

export function disclaimerText(termsUrl: string): string {
  return (
    'Informational only; not financial, investment or betting advice. No guarantee of accuracy, ' +
    'completeness or timeliness; you assume all risk of any use. Prediction markets are restricted or ' +
    `illegal in some jurisdictions; comply with your local law. Terms: ${termsUrl}`
  );
}

const TERMS_SUMMARY: readonly string[] = [
  'Signals and all other data are informational only and are not financial, investment, trading or betting advice.',
  'No guarantee of accuracy, completeness, timeliness or availability; observations and odds come from third parties and may be late or wrong.',
  'You assume all risk of any decision or trade you make; the operator is not liable for losses.',
  'Prediction markets are restricted or prohibited in some jurisdictions; you are responsible for complying with the law where you are.',
  'Signals are licensed for your own use only; resale, redistribution or republication is not permitted.',
  'Payments are final once settled, except that a payment the service could not apply is refunded.',
  'Wallets on sanctions lists may not use the paid service.',
  'These terms are a draft and may change; the version and effective date identify the text you accepted.',
];

/** The full text, public/terms.txt with its version, date and address filled in. */
export function termsText(termsUrl: string): string {
  const fields: Record<string, string> = { version: TERMS_VERSION, effectiveDate: TERMS_EFFECTIVE_DATE, url: termsUrl };
  return readAssetText('public/terms.txt').replace(
    /\{(version|effectiveDate|url)\}/g,
    (_, name: string) => fields[name]!,
  );
}

export function termsJson(termsUrl: string) {
  return { version: TERMS_VERSION, effectiveDate: TERMS_EFFECTIVE_DATE, url: termsUrl, summary: [...TERMS_SUMMARY] };
}
