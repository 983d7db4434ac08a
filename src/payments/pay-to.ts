/** Mock-mode settlement wallet when PAY_TO is unset: a fixed, obviously-not-real address. */
export const MOCK_PAY_TO = '0x000000000000000000000000000000000000dEaD';

/** The wallet payments settle to: PAY_TO, or the mock wallet in mock mode (live mode requires PAY_TO). */
export function payTo(settings: { PAY_TO?: string | undefined; PAYMENT_MODE: 'mock' | 'live' }): string | null {
  return settings.PAY_TO ?? (settings.PAYMENT_MODE === 'mock' ? MOCK_PAY_TO : null);
}
