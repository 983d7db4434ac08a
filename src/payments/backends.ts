import { ConfigError } from '../lib/env-fields.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { SettlerSettings } from './settlers/from-config.ts';
import { createMockSettler } from './settlers/mock.ts';
import type { SupportedResult } from './settlers/negotiate.ts';
import type { Settler } from './settlers/settler.ts';
import { redactUrl, splitList } from '../lib/url-credentials.ts';
import type { TypedDataVerifier } from './verify.ts';

/** The configured settler and chain verifier; mock mode never loads the live ones (viem was a tenth of the start). */
export async function paymentBackends(
  config: SettlerSettings,
  opts: { logger?: Logger; metrics?: Metrics } = {},
): Promise<{ settler: Settler; chainVerifier?: TypedDataVerifier; supported?: SupportedResult }> {
  if (config.PAYMENT_MODE === 'mock') return { settler: createMockSettler() };
  const live = await import('./settlers/from-config.ts');
  const { facilitatorMetrics } = await import('./settlers/failover.ts');
  const watch = opts.metrics ? facilitatorMetrics(opts.metrics) : undefined;
  const settler = live.settlerFromConfig(config, { logger: opts.logger, onSkip: watch?.onSkip });
  watch?.watch(settler);
  // A facilitator listing no Base kind is a configuration error; one not answering yet is asked again on a payment.
  const supported = await settler.supported?.();
  if (supported && !supported.ok && supported.problem === 'none') {
    settler.close?.();
    const urls = splitList(config.FACILITATOR_URL ?? '').map(redactUrl);
    throw new ConfigError([`FACILITATOR_URL: ${urls.join(', ')} ${supported.detail}`]);
  }
  return { settler, chainVerifier: live.chainVerifierFromConfig(config), supported };
}
