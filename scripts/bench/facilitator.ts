/**
 * The instant fake facilitator both sides of the peer comparison settle through (its own
 * process, so its CPU is in neither server's figure). It speaks the x402 facilitator wire format
 * of both protocol versions, since isocast speaks v1 and `@x402/hono` 2.x speaks v2:
 * `GET /supported`, `POST /verify` -> `{isValid: true, payer}`, `POST /settle` ->
 * `{success: true, transaction, network, payer}` with a transaction hash unique per
 * (payer, nonce). It trusts every payload: what is measured is the servers, not this process.
 * test/fakes/facilitator.ts is the strict one the tests use (v1 schemas, failure modes).
 *
 * It is also the chain's JSON-RPC for a server that confirms a facilitator's settlement on chain
 * (RPC_URL pointed here): `POST /` answers `eth_getTransactionReceipt` for a hash it returned with
 * the receipt a real USDC `transferWithAuthorization` produces, status 1 and the token's two logs,
 * `Transfer(from, to, value)` and `AuthorizationUsed(authorizer, nonce)`; `eth_chainId` is Base's.
 *
 * node scripts/bench/facilitator.ts '{"port":9100}'
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { keccak256, pad, toHex } from 'viem';

const input = JSON.parse(process.argv[2] ?? '{}') as { port: number };
const NETWORKS = ['eip155:8453', 'base'];
const supported = JSON.stringify({
  kinds: [
    ...NETWORKS.map((network) => ({ x402Version: 1, scheme: 'exact', network })),
    { x402Version: 2, scheme: 'exact', network: 'eip155:8453' },
  ],
  extensions: [],
  signers: { 'eip155:*': ['0x000000000000000000000000000000000000fAc1'] },
});
const counts = { verify: 0, settle: 0, supported: 0, rejected: 0, receipts: 0 };
const TRANSFER = keccak256(toHex('Transfer(address,address,uint256)'));
const AUTHORIZATION_USED = keccak256(toHex('AuthorizationUsed(address,bytes32)'));
const BLOCK_HASH = `0x${'b1'.repeat(32)}` as const;
type Settled = { token: string; from: string; to: string; value: string; nonce: string };
/** Transaction hash -> what it moved; bounded so a long run does not grow without end. */
const settled = new Map<string, Settled>();

function receipt(hash: string, s: Settled, block: number): object {
  const common = {
    blockHash: BLOCK_HASH,
    blockNumber: toHex(block),
    transactionHash: hash,
    transactionIndex: '0x0',
    removed: false,
  };
  const topic = (a: string) => pad(a.toLowerCase() as `0x${string}`, { size: 32 });
  return {
    ...common,
    status: '0x1',
    type: '0x2',
    from: '0x000000000000000000000000000000000000fac1',
    to: s.token,
    contractAddress: null,
    gasUsed: '0x16e36',
    cumulativeGasUsed: '0x16e36',
    effectiveGasPrice: '0x4c4b40',
    logsBloom: `0x${'0'.repeat(512)}`,
    // FiatToken's transferWithAuthorization marks the nonce used, then transfers: in that order.
    logs: [
      {
        ...common,
        address: s.token,
        topics: [AUTHORIZATION_USED, topic(s.from), s.nonce],
        data: '0x',
        logIndex: '0x0',
      },
      {
        ...common,
        address: s.token,
        topics: [TRANSFER, topic(s.from), topic(s.to)],
        data: pad(toHex(BigInt(s.value)), { size: 32 }),
        logIndex: '0x1',
      },
    ],
  };
}

/** One JSON-RPC call: the receipt of a settlement this process made, Base's chain id, else an error. */
function rpc(call: { id?: unknown; method?: string; params?: unknown[] }): object {
  const reply = (result: unknown) => ({ jsonrpc: '2.0', id: call.id ?? null, result });
  if (call.method === 'eth_chainId') return reply('0x2105');
  if (call.method === 'eth_blockNumber') return reply(toHex(1_000_000 + counts.settle));
  if (call.method === 'eth_getTransactionReceipt') {
    const hash = String(call.params?.[0] ?? '').toLowerCase();
    const s = settled.get(hash);
    counts.receipts++;
    return reply(s ? receipt(hash, s, 1_000_000) : null);
  }
  return { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32601, message: 'method not found' } };
}

const server = createServer((req, res) => {
  const send = (status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  if (req.method === 'GET' && req.url === '/supported') {
    counts.supported++;
    return send(200, supported);
  }
  if (req.method === 'GET' && req.url === '/counts') return send(200, JSON.stringify(counts));
  if (req.method === 'GET' && req.url === '/health') return send(200, '{"ok":true}');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'POST' && (req.url === '/' || req.url === '/rpc')) {
      let calls: unknown;
      try {
        calls = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(200, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }));
      }
      const one = (c: unknown) => rpc((c ?? {}) as { id?: unknown; method?: string; params?: unknown[] });
      return send(200, JSON.stringify(Array.isArray(calls) ? calls.map(one) : one(calls)));
    }
    let body: {
      paymentPayload?: {
        payload?: { authorization?: { from?: string; to?: string; value?: string; nonce?: string } };
      };
      paymentRequirements?: { network?: string; asset?: string };
    };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = {};
    }
    const auth = body.paymentPayload?.payload?.authorization;
    const network = body.paymentRequirements?.network;
    if (!auth?.from || !auth.nonce || !network) {
      counts.rejected++;
      return send(400, JSON.stringify({ isValid: false, invalidReason: 'invalid_payload' }));
    }
    if (req.method === 'POST' && req.url === '/verify') {
      counts.verify++;
      return send(200, JSON.stringify({ isValid: true, payer: auth.from }));
    }
    if (req.method === 'POST' && req.url === '/settle') {
      counts.settle++;
      const transaction = '0x' + createHash('sha256').update(`${auth.from}:${auth.nonce}`).digest('hex');
      if (settled.size >= 100_000) settled.delete(settled.keys().next().value!);
      settled.set(transaction, {
        token: (body.paymentRequirements?.asset ?? '').toLowerCase(),
        from: auth.from,
        to: auth.to ?? '0x0000000000000000000000000000000000000000',
        value: auth.value ?? '0',
        nonce: auth.nonce,
      });
      return send(200, JSON.stringify({ success: true, transaction, network, payer: auth.from }));
    }
    send(404, '{"error":"not found"}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(input.port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
