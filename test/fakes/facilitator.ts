import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak256, toHex } from 'viem';
import {
  PaymentPayloadV1Schema,
  PaymentPayloadV2Schema,
  PaymentRequirementsV1Schema,
  PaymentRequirementsV2Schema,
} from '@x402/core/schemas';
import type { AuthorizationStatus } from '../../src/payments/settlers/settler.ts';
import type { FakeChain } from './chain-rpc.ts';

/**
 * A local x402 v1 facilitator: `GET /supported`, and `POST /verify` and `POST /settle` with
 * `{x402Version, paymentPayload, paymentRequirements}`, both parsed with the published
 * @x402/core v1 schemas so a request our client sends that real facilitators would reject fails
 * here too. `mode` picks its behaviour; every request is recorded.
 */
export type FacilitatorMode =
  | 'ok'
  | 'invalid'
  | 'settle-fails'
  | 'hang-settle'
  | 'hang-verify'
  | 'garbage'
  | 'http-500'
  /** 429 with Retry-After on /verify. */
  | 'rate-limited'
  /** Lies: /settle says success without a transaction hash. */
  | 'no-tx-hash'
  /** Lies: /settle says success with the same transaction hash for every payment. */
  | 'same-tx'
  /** Transfers on its chain, then never answers /settle (the client times out). */
  | 'settle-then-hang'
  /** Transfers on its chain, then answers /settle with HTTP 502. */
  | 'settle-then-502'
  /** Transfers on its chain, then answers success: false. */
  | 'settle-then-fail'
  /** Transfers on its chain, then resets the connection (the client sees no answer at all). */
  | 'settle-then-reset'
  /** Resets the connection without transferring. */
  | 'reset'
  /** Transfers at once, answers success after `slowMs` (a kill can land in between). */
  | 'slow-ok'
  /** Waits `slowMs`, then transfers and answers: the transfer can land after the server died. */
  | 'slow-then-transfer'
  /** /settle answers 400 with a non-x402 error body (the legacy reference example's refusal). */
  | 'settle-400'
  /** Transfers, then answers 400 with an error message that names the transaction. */
  | 'settle-then-400-naming-tx';

export type FakeFacilitator = {
  url: string;
  mode: FacilitatorMode;
  requests: { path: string; authorization: string | undefined; body: any }[];
  /** Delay before every answer (a slow facilitator). */
  delayMs: number;
  /**
   * Its chain: `${from}:${nonce}` (lowercase) -> the transaction that used the authorization.
   * Written whenever this facilitator transfers (even when it then lies or goes quiet).
   */
  chain: Map<string, `0x${string}`>;
  /** Chain time in unix seconds (for "unused past validBefore"). */
  chainTime: () => number;
  /** Picks the behaviour of each /settle call (chaos); `mode` when unset. */
  pickSettle?: () => FacilitatorMode;
  /** How long the slow modes hold /settle. */
  slowMs: () => number;
  /** Every /settle answer given, by the behaviour picked. */
  settleOutcomes: Map<string, number>;
  /** The body of GET /supported (a v1 facilitator listing Base by its legacy name by default). */
  supported: unknown;
  /** GET /supported calls answered (they are not in `requests`). */
  supportedCalls: number;
  /** The errorReason of `settle-fails`. */
  failReason: string;
  /** authorizationState as an RPC would answer it, for the settler's `status` option. */
  status(payer: string, nonce: string, terms: { validBefore: number }): Promise<AuthorizationStatus>;
  close(): Promise<void>;
};

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `chain`: transfers land on this fake chain (the one the server's RPC_URL reads) too. */
export async function startFakeFacilitator(
  mode: FacilitatorMode = 'ok',
  opts: { chain?: FakeChain } = {},
): Promise<FakeFacilitator> {
  const hanging = new Set<import('node:http').ServerResponse>();
  const fake: FakeFacilitator = {
    url: '',
    mode,
    requests: [],
    delayMs: 0,
    chain: new Map(),
    settleOutcomes: new Map(),
    supported: { kinds: [{ x402Version: 1, scheme: 'exact', network: 'base' }] },
    supportedCalls: 0,
    failReason: 'insufficient_funds',
    slowMs: () => 1_000,
    chainTime: () => Math.floor(Date.now() / 1000),
    close: async () => {},
    status: async (payer, nonce, { validBefore }) => {
      const tx = fake.chain.get(`${payer.toLowerCase()}:${nonce.toLowerCase()}`);
      return tx ? { state: 'used', txHash: tx } : { state: 'unused', expired: fake.chainTime() >= validBefore };
    },
  };
  const server: Server = createServer(async (req, res) => {
    const text = await body(req);
    if (req.method === 'GET' && req.url === '/supported') {
      fake.supportedCalls++;
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(fake.supported));
    }
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    fake.requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body: json });
    if (fake.delayMs > 0) await new Promise((r) => setTimeout(r, fake.delayMs));
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    };
    // Each version's request parsed with its published schema (v2: `accepted`, `amount`, `resource`).
    const v2 = json?.x402Version === 2;
    const payload = (v2 ? PaymentPayloadV2Schema : PaymentPayloadV1Schema).safeParse(json?.paymentPayload);
    const reqs = (v2 ? PaymentRequirementsV2Schema : PaymentRequirementsV1Schema).safeParse(json?.paymentRequirements);
    if ((json?.x402Version !== 1 && !v2) || !payload.success || !reqs.success)
      return send(400, { isValid: false, invalidReason: 'invalid_payload' });
    const auth = (payload.data.payload as any).authorization;
    if (req.method === 'POST' && req.url === '/verify') {
      if (fake.mode === 'hang-verify') {
        hanging.add(res);
        return;
      }
      if (fake.mode === 'invalid')
        return send(400, { isValid: false, invalidReason: 'invalid_exact_evm_payload_signature', payer: auth.from });
      if (fake.mode === 'garbage') return send(200, '<html>oops</html>');
      if (fake.mode === 'http-500') return send(500, { error: 'boom' });
      if (fake.mode === 'rate-limited') return send(429, { error: 'Too Many Requests' }, { 'retry-after': '30' });
      return send(200, { isValid: true, payer: auth.from });
    }
    if (req.method === 'POST' && req.url === '/settle') {
      const mode = fake.pickSettle?.() ?? fake.mode;
      fake.settleOutcomes.set(mode, (fake.settleOutcomes.get(mode) ?? 0) + 1);
      if (mode === 'hang-settle') {
        hanging.add(res);
        return;
      }
      // /settle verifies again before any transfer (as @x402/evm's facilitator does): a payment
      // /verify refuses is refused here too, with no transaction.
      if (mode === 'invalid')
        return send(200, {
          success: false,
          errorReason: 'invalid_exact_evm_payload_signature',
          transaction: '',
          network: reqs.data.network,
          payer: auth.from,
        });
      const key = `${String(auth.from).toLowerCase()}:${String(auth.nonce).toLowerCase()}`;
      let tx = keccak256(toHex(`${auth.from}:${auth.nonce}`));
      if (opts.chain?.used.has(key)) fake.chain.set(key, opts.chain.used.get(key)!.txHash);
      const transfer = () => {
        if (fake.chain.has(key)) return;
        if (opts.chain)
          tx = opts.chain.use(auth.from, auth.nonce, { amountMicro: Number(auth.value), to: auth.to }).txHash;
        fake.chain.set(key, tx);
      };
      if (mode === 'settle-then-hang') {
        transfer();
        hanging.add(res);
        return;
      }
      if (mode === 'settle-then-reset') {
        transfer();
        res.socket?.destroy();
        return;
      }
      if (mode === 'reset') {
        res.socket?.destroy();
        return;
      }
      if (mode === 'slow-ok' || mode === 'slow-then-transfer') {
        if (mode === 'slow-ok') transfer();
        hanging.add(res);
        await new Promise((r) => setTimeout(r, fake.slowMs()));
        hanging.delete(res);
        transfer();
        if (res.destroyed) return;
        return send(200, {
          success: true,
          transaction: fake.chain.get(key),
          network: reqs.data.network,
          payer: auth.from,
        });
      }
      if (mode === 'settle-400')
        return send(400, { error: 'Invalid request: ZodError: [{"code":"invalid_enum_value","path":["network"]}]' });
      if (mode === 'settle-then-400-naming-tx') {
        transfer();
        return send(400, { error: `Invalid request: Error: timed out waiting for ${fake.chain.get(key)}` });
      }
      if (mode === 'settle-then-502') {
        transfer();
        return send(502, { error: 'bad gateway' });
      }
      if (mode === 'settle-then-fail') {
        transfer();
        return send(200, {
          success: false,
          errorReason: 'unexpected_settle_error',
          transaction: '',
          network: reqs.data.network,
          payer: auth.from,
        });
      }
      if (mode === 'no-tx-hash') {
        transfer();
        return send(200, { success: true, network: reqs.data.network, payer: auth.from });
      }
      if (mode === 'same-tx')
        return send(200, {
          success: true,
          transaction: '0x' + 'ee'.repeat(32),
          network: reqs.data.network,
          payer: auth.from,
        });
      if (mode === 'settle-fails')
        return send(200, {
          success: false,
          errorReason: fake.failReason,
          transaction: '',
          network: reqs.data.network,
          payer: auth.from,
        });
      if (fake.chain.has(key))
        return send(200, {
          success: false,
          errorReason: 'invalid_transaction_state',
          transaction: '',
          network: reqs.data.network,
          payer: auth.from,
        });
      transfer();
      return send(200, { success: true, transaction: tx, network: reqs.data.network, payer: auth.from });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((r) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => r());
    });
  return fake;
}
