import type { Metrics } from '../lib/metrics.ts';
import { parseTrustedProxies } from './client-address.ts';
import { createAbuseLimits, type AbuseLimits } from './limits.ts';

export type { AbuseLimits };

/** The settings the limits read; the server's Config carries them (config.ts). */
interface LimitSettings {
  RATE_LIMIT_ADDRESS_PER_MIN: number;
  RATE_LIMIT_ADDRESS_BURST: number;
  RATE_LIMIT_WALLET_PER_MIN: number;
  RATE_LIMIT_WALLET_BURST: number;
  TEST_MESSAGES_PER_HOUR: number;
  TEST_MESSAGES_BURST: number;
  TRUSTED_PROXIES?: string | undefined;
}

/** The abuse limits as configured (README, Configuration: abuse limits). */
export function abuseLimitsFromConfig(
  config: LimitSettings,
  deps: { now: () => number; disclaimer: string; metrics?: Metrics },
): AbuseLimits {
  return createAbuseLimits(
    {
      address: { perMinute: config.RATE_LIMIT_ADDRESS_PER_MIN, burst: config.RATE_LIMIT_ADDRESS_BURST },
      wallet: { perMinute: config.RATE_LIMIT_WALLET_PER_MIN, burst: config.RATE_LIMIT_WALLET_BURST },
      testMessages: { perMinute: config.TEST_MESSAGES_PER_HOUR / 60, burst: config.TEST_MESSAGES_BURST },
      // A client may register a few chats (a household, an office behind one NAT), yet its burst
      // stays at 6 slots of the 2-a-second test lane: 3 s, under the 5 s a test message waits.
      testMessagesPerAddress: {
        perMinute: (2 * config.TEST_MESSAGES_PER_HOUR) / 60,
        burst: 2 * config.TEST_MESSAGES_BURST,
      },
      trustedProxies: parseTrustedProxies(config.TRUSTED_PROXIES),
    },
    deps,
  );
}
