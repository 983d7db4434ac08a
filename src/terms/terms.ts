/** The disclaimer every JSON object response carries, built from TERMS_URL once at start. */
export function disclaimerText(termsUrl: string): string {
  return (
    'Informational only; not financial, investment or betting advice. No guarantee of accuracy, ' +
    'completeness or timeliness; you assume all risk of any use. Prediction markets are restricted or ' +
    `illegal in some jurisdictions; comply with your local law. Terms: ${termsUrl}`
  );
}
