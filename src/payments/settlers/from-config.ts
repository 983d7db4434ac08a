import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { createPublicClient, http, type Address, type Hex } from 'viem';
import type { TypedDataVerifier } from '../verify.ts';
import { EIP3009_ABI, createChainSettler } from './chain.ts';
import { chainFor, createProofReader } from './chain-proof.ts';
import { createFacilitatorSettler } from './facilitator.ts';
import { createFailoverSettler } from './failover.ts';
import { CDP_FACILITATOR_URL, CDP_JWT_LIFETIME_S, cdpSigningKey } from './cdp-key.ts';
import { redactUrl, splitList, splitPlaces } from '../../lib/url-credentials.ts';
import type { Logger } from '../../lib/logger.ts';
import type { PerRequestHeaders } from '../../lib/http-client.ts';
import type { Settler } from './settler.ts';

export interface SettlerSettings {
  PAYMENT_MODE: 'mock' | 'live';
  SETTLEMENT: 'facilitator' | 'chain';
  RPC_URL?: string | undefined;
  SETTLER_PRIVATE_KEY?: string | undefined;
  USDC_ADDRESS: string;
  FACILITATOR_URL?: string | undefined;
  FACILITATOR_AUTH?: string | undefined;
  CDP_API_KEY_ID?: string | undefined;
  CDP_API_KEY_SECRET?: string | undefined;
}

/** The live settler the configuration asks for (backends.ts gives mock mode its own); config.ts required its parts. */
export function settlerFromConfig(
  config: SettlerSettings,
  opts: { logger?: Logger; onSkip?: (facilitator: string) => void; now?: () => number } = {},
): Settler {
  if (config.SETTLEMENT === 'chain') {
    return createChainSettler({
      rpcUrl: config.RPC_URL!,
      privateKey: config.SETTLER_PRIVATE_KEY as Hex,
      usdc: config.USDC_ADDRESS as Address,
    });
  }
  // A quiet /settle is settled by authorizationState; a success is believed once our RPC shows PAY_TO paid.
  const usdc = config.USDC_ADDRESS as Address;
  const reader = config.RPC_URL ? createProofReader({ rpcUrl: config.RPC_URL, usdc }) : undefined;
  const used = config.RPC_URL ? authorizationUsed(config.RPC_URL, usdc) : undefined;
  const cdp =
    config.CDP_API_KEY_ID && config.CDP_API_KEY_SECRET
      ? cdpJwtHeaders(config.CDP_API_KEY_ID, config.CDP_API_KEY_SECRET)
      : undefined;
  const entries = facilitatorList(config).map((f) => ({
    name: redactUrl(f.url),
    settler: createFacilitatorSettler({
      url: f.url,
      auth: f.auth,
      perRequest: f.cdp ? cdp : undefined,
      status: reader?.status,
      confirm: reader?.confirm,
      used,
    }),
  }));
  // One facilitator too: its health is reported the same way (doctor, /admin, /metrics).
  return createFailoverSettler(entries, { now: opts.now ?? Date.now, logger: opts.logger, onSkip: opts.onSkip });
}

/** Each FACILITATOR_URL with FACILITATOR_AUTH's entry in its place (one URL: the whole value), or CDP's JWT. */
export function facilitatorList(config: SettlerSettings): { url: string; auth?: string; cdp: boolean }[] {
  const urls = splitList(config.FACILITATOR_URL ?? '');
  const auths = urls.length === 1 ? [config.FACILITATOR_AUTH ?? ''] : splitPlaces(config.FACILITATOR_AUTH ?? '');
  const cdpHost = new URL(CDP_FACILITATOR_URL).host;
  return urls.map((url, i) => ({
    url,
    ...(auths[i] ? { auth: auths[i] } : {}),
    cdp: urls.length === 1 || (URL.canParse(url) && new URL(url).host === cdpHost),
  }));
}

function cdpJwtHeaders(keyId: string, secret: string): PerRequestHeaders {
  const { key, alg } = cdpSigningKey(secret);
  return async (method, host, path) => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({ uris: [`${method} ${host}${path}`] })
      .setProtectedHeader({ alg, kid: keyId, typ: 'JWT', nonce: randomBytes(16).toString('hex') })
      .setIssuer('cdp')
      .setSubject(keyId)
      .setAudience(['cdp_service'])
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + CDP_JWT_LIFETIME_S)
      .sign(key);
    return { authorization: `Bearer ${jwt}` };
  };
}

const rpcClient = (rpcUrl: string, retryCount: number) =>
  createPublicClient({ chain: chainFor(rpcUrl), transport: http(rpcUrl, { timeout: 10_000, retryCount }) });

/** authorizationState at the latest block, one eth_call, no retry: what a facilitator refusal costs. */
function authorizationUsed(rpcUrl: string, usdc: Address) {
  const client = rpcClient(rpcUrl, 0);
  return (payer: Address, nonce: Hex): Promise<boolean> =>
    client.readContract({ address: usdc, abi: EIP3009_ABI, functionName: 'authorizationState', args: [payer, nonce] });
}

/** Live mode with RPC_URL: smart-wallet signatures (ERC-1271, ERC-6492) verify through the chain. */
export function chainVerifierFromConfig(config: SettlerSettings): TypedDataVerifier | undefined {
  if (config.PAYMENT_MODE !== 'live' || !config.RPC_URL) return undefined;
  // viem's public client is one: its verifyTypedData and verifyMessage need no `this`.
  return rpcClient(config.RPC_URL, 1);
}
