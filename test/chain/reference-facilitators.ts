import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWalletClient, http, publicActions, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { settle as legacySettle, verify as legacyVerify } from 'x402/facilitator';
import { PaymentPayloadSchema, PaymentRequirementsSchema } from 'x402/types';
import { chainFor } from '../../src/payments/settlers/chain-proof.ts';

/**
 * The two reference facilitators nobody here wrote, each behind the HTTP front its own examples
 * serve (x402 `examples/typescript/facilitator`: POST /verify, POST /settle, GET /supported with
 * their status codes). Only the glue is ours: the viem signer on the local chain (the examples
 * build one for a public network) and a hook that kills the front once a transfer has been
 * broadcast.
 *
 * - `v2`: `@x402/core`'s `x402Facilitator` with `@x402/evm`'s `registerExactEvmScheme` for
 *   `eip155:8453` (it also registers its v1 scheme for the legacy names).
 * - `legacy`: the `x402` 1.2 package's `verify`/`settle`, requests parsed with its zod schemas,
 *   any error answered 400 as its example does; `/supported` lists v1 `exact` on `base`.
 */
export type ReferenceFront = {
  name: 'v2' | 'legacy';
  url: string;
  /** POST paths served, in order. */
  calls: string[];
  /** When set, the next broadcast transfer kills the front (connections reset, listener closed). */
  killAfterBroadcast: boolean;
  /** Runs right after a kill's broadcast, before the reset (the test holds the block there). */
  onBroadcast?: (tx: Hex) => Promise<void>;
  /** Resolves once every request it took has finished (a killed one still waits for its receipt). */
  idle(): Promise<void>;
  close(): Promise<void>;
};

/** Hardhat's dev accounts #2 and #3 (public test keys): the facilitators' gas wallets. */
export const FACILITATOR_KEYS = {
  v2: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  legacy: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
} as const;

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return {};
  }
}

function json(res: ServerResponse, status: number, body: unknown) {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** `opts.port`: listen there (a restart of a front that was closed, at the same URL). */
export async function startReferenceFront(
  name: 'v2' | 'legacy',
  rpcUrl: string,
  opts: { port?: number } = {},
): Promise<ReferenceFront> {
  const account = privateKeyToAccount(FACILITATOR_KEYS[name]);
  const client = createWalletClient({ account, chain: chainFor(rpcUrl), transport: http(rpcUrl) }).extend(
    publicActions,
  );
  let server!: Server;
  const front: ReferenceFront = {
    name,
    url: '',
    calls: [],
    killAfterBroadcast: false,
    idle: async () => {
      await Promise.allSettled([...running]);
    },
    close: async () => {},
  };
  const running = new Set<Promise<void>>();
  // The glue's one hook: a broadcast transfer, then (when armed) the process "dies".
  const writeContract = async (args: any): Promise<Hex> => {
    const tx = await client.writeContract(args);
    if (front.killAfterBroadcast) {
      front.killAfterBroadcast = false;
      await front.onBroadcast?.(tx);
      server.closeAllConnections();
      server.close();
    }
    return tx;
  };

  let handle: (path: string, body: any, res: ServerResponse) => Promise<void>;
  let supported: () => unknown;
  if (name === 'v2') {
    const signer = toFacilitatorEvmSigner({
      address: account.address,
      getCode: (a) => client.getCode(a),
      readContract: (a) => client.readContract({ ...a, args: a.args || [] } as any),
      verifyTypedData: (a) => client.verifyTypedData(a as any),
      writeContract: (a) => writeContract({ ...a, args: a.args || [] }),
      sendTransaction: (a) => client.sendTransaction(a),
      waitForTransactionReceipt: (a) => client.waitForTransactionReceipt(a),
    });
    const facilitator = new x402Facilitator();
    registerExactEvmScheme(facilitator, { signer, networks: 'eip155:8453' });
    supported = () => facilitator.getSupported();
    handle = async (path, body, res) => {
      const { paymentPayload, paymentRequirements } = body ?? {};
      if (!paymentPayload || !paymentRequirements)
        return json(res, 400, { error: 'Missing paymentPayload or paymentRequirements' });
      try {
        if (path === '/verify') return json(res, 200, await facilitator.verify(paymentPayload, paymentRequirements));
        return json(res, 200, await facilitator.settle(paymentPayload, paymentRequirements));
      } catch (error) {
        if (path === '/settle' && error instanceof Error && error.message.includes('Settlement aborted:'))
          return json(res, 200, {
            success: false,
            errorReason: error.message.replace('Settlement aborted: ', ''),
            network: paymentPayload?.network || 'unknown',
          });
        return json(res, 500, { error: error instanceof Error ? error.message : 'Unknown error' });
      }
    };
  } else {
    const signer = { ...client, writeContract } as typeof client;
    supported = () => ({ kinds: [{ x402Version: 1, scheme: 'exact', network: 'base' }] });
    handle = async (path, body, res) => {
      try {
        const paymentRequirements = PaymentRequirementsSchema.parse(body.paymentRequirements);
        const paymentPayload = PaymentPayloadSchema.parse(body.paymentPayload);
        if (path === '/verify') return json(res, 200, await legacyVerify(signer, paymentPayload, paymentRequirements));
        return json(res, 200, await legacySettle(signer, paymentPayload, paymentRequirements));
      } catch (error) {
        return json(res, 400, { error: path === '/verify' ? 'Invalid request' : `Invalid request: ${error}` });
      }
    };
  }

  server = createServer(async (req, res) => {
    const path = req.url ?? '';
    if (req.method === 'GET' && path === '/supported') return json(res, 200, supported());
    if (req.method === 'POST' && (path === '/verify' || path === '/settle')) {
      front.calls.push(path);
      const work = readJson(req).then((body) => handle(path, body, res));
      running.add(work);
      return work.finally(() => running.delete(work));
    }
    json(res, 404, { error: 'not found' });
  });
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', () => r()));
  front.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  front.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return front;
}
