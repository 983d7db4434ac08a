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

export function termsText(termsUrl: string): string {
  return `isocast terms of use
Version ${TERMS_VERSION} (draft), effective ${TERMS_EFFECTIVE_DATE}
Address: ${termsUrl}

This service is run by the operator of this isocast instance. By calling its API, paying for signals or registering a chat
you agree to these terms.

1. What you get
The service sells signals: notices that the observed daily-high temperature of a city has moved
into a new bucket of a prediction market, with the odds of every bucket sampled at that moment.
Signals are sold in prepaid bundles per city. A bundle entitles the paying wallet to read signals
up to a sequence ceiling; it has no expiry.

2. Informational only; no advice
Everything the service provides is informational only. Nothing is financial, investment, trading
or betting advice, or a recommendation to buy or sell anything.

3. No guarantee of accuracy
Observations come from weather services and odds from a third-party market; either may be late,
revised, incomplete or wrong, and the service may miss or delay a signal. No warranty of accuracy,
completeness, timeliness, availability or fitness for a purpose is given. The market resolves by
its own rules and sources, not by this service.

4. Your risk
You assume all risk of any decision, trade or bet you make with or without the signals. To the
extent the law allows, the operator is not liable for any loss, including trading losses, lost
profits or consequential damages. Total liability is limited to the amount you paid in the
30 days before the claim.

5. Jurisdictions
Prediction markets are restricted or prohibited in some jurisdictions. You are responsible for
complying with the law that applies to you. Do not use the service where doing so is unlawful.
Wallets on sanctions lists are refused.

6. Licence
Signals are licensed to you for your own use. You may not resell, redistribute, republish,
sublicense or make them available to third parties, in whole or in part, including through an
automated feed or bot.

7. Payments and refunds
Payments are made in USDC with the x402 protocol and are final once settled. If the service
settles a payment but cannot apply it to your entitlement, it queues a refund of that payment.

8. Changes
These terms are a draft. The operator may change them; the version and effective date above
identify the text in force.
`;
}

export function termsJson(termsUrl: string) {
  return { version: TERMS_VERSION, effectiveDate: TERMS_EFFECTIVE_DATE, url: termsUrl, summary: [...TERMS_SUMMARY] };
}
