import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeEventTopics,
  keccak256,
  toHex,
  type Address,
  type Hex,
} from 'viem';
import { EIP3009_ABI } from '../../src/payments/settlers/chain.ts';
import { AUTHORIZATION_USED_TOPIC, TRANSFER_TOPIC } from '../../src/payments/settlers/chain-proof.ts';

/**
 * A fake Base chain for the USDC token, over JSON-RPC on 127.0.0.1: just what the settlers'
 * authorization lookup asks (eth_chainId, eth_blockNumber, eth_getBlockByNumber, eth_call of
 * authorizationState, eth_getLogs of AuthorizationUsed, eth_getTransactionReceipt with the token's
 * AuthorizationUsed and Transfer logs). `use()` is a transfer landing: the
 * (payer, nonce) becomes used in a new block, with its transaction hash and log.
 */
export type FakeChain = {
  url: string;
  usdc: Address;
  /** `${payer}:${nonce}` (lowercase) -> the transfer. */
  used: Map<string, { txHash: Hex; block: number; payer: Address; nonce: Hex; amountMicro: number; to: Address }>;
  /** Unix seconds of the next block (defaults to the wall clock). */
  time: () => number;
  /**
   * Marks (payer, nonce) used in a new block by a transfer of `amountMicro` to `to` (default:
   * the payee every test server uses); false when it already was (the token refuses).
   */
  use(payer: Address, nonce: Hex, transfer: { amountMicro: number; to?: Address }): { ok: boolean; txHash: Hex };
  /** Requests answered, by method. */
  calls: Map<string, number>;
  /** When set, every request fails with HTTP 503 (an RPC outage). */
  down: boolean;
  close(): Promise<void>;
};

export const FAKE_USDC: Address = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
/** The PAY_TO the tests that use this chain configure. */
export const FAKE_PAY_TO: Address = '0x00000000000000000000000000000000000000aa';

export async function startFakeChain(): Promise<FakeChain> {
  let height = 1;
  const blockTimes = new Map<number, number>([[1, Math.floor(Date.now() / 1000)]]);
  const chain: FakeChain = {
    url: '',
    usdc: FAKE_USDC,
    used: new Map(),
    time: () => Math.floor(Date.now() / 1000),
    calls: new Map(),
    down: false,
    close: async () => {},
    use(payer, nonce, { amountMicro, to = FAKE_PAY_TO }) {
      const key = `${payer.toLowerCase()}:${nonce.toLowerCase()}`;
      const txHash = keccak256(toHex(`transfer:${key}:${height}`));
      if (chain.used.has(key)) return { ok: false, txHash };
      height++;
      blockTimes.set(height, chain.time());
      chain.used.set(key, {
        txHash,
        block: height,
        payer: payer.toLowerCase() as Address,
        nonce: nonce.toLowerCase() as Hex,
        amountMicro,
        to: to.toLowerCase() as Address,
      });
      return { ok: true, txHash };
    },
  };
  const hex = (n: number) => `0x${n.toString(16)}`;
  const blockAt = (n: number) => ({
    number: hex(n),
    hash: keccak256(toHex(`block:${n}`)),
    parentHash: keccak256(toHex(`block:${n - 1}`)),
    timestamp: hex(blockTimes.get(n) ?? chain.time()),
    nonce: '0x0000000000000000',
    difficulty: '0x0',
    gasLimit: '0x1c9c380',
    gasUsed: '0x0',
    miner: '0x0000000000000000000000000000000000000000',
    extraData: '0x',
    size: '0x200',
    stateRoot: keccak256(toHex(`state:${n}`)),
    transactionsRoot: keccak256(toHex('tx')),
    receiptsRoot: keccak256(toHex('rc')),
    logsBloom: `0x${'00'.repeat(256)}`,
    sha3Uncles: keccak256(toHex('u')),
    mixHash: keccak256(toHex('m')),
    baseFeePerGas: '0x1',
    transactions: [],
    uncles: [],
  });
  const blockNumber = (tag: unknown) =>
    typeof tag === 'string' && tag.startsWith('0x') ? Number.parseInt(tag.slice(2), 16) : height;

  function answer(method: string, params: unknown[]): unknown {
    switch (method) {
      case 'eth_chainId':
        return '0x2105';
      case 'eth_blockNumber':
        return hex(height);
      case 'eth_getBlockByNumber': {
        // Each "latest" read first closes a block at the current time: chain time moves on.
        if (params[0] === 'latest') {
          height++;
          blockTimes.set(height, chain.time());
        }
        return blockAt(blockNumber(params[0]));
      }
      case 'eth_call': {
        const call = params[0] as { to: string; data: Hex };
        if (call.to.toLowerCase() !== chain.usdc.toLowerCase()) return '0x';
        const d = decodeFunctionData({ abi: EIP3009_ABI, data: call.data });
        if (d.functionName !== 'authorizationState') throw new Error(`unsupported call ${d.functionName}`);
        const [payer, nonce] = d.args as [Address, Hex];
        const at = blockNumber(params[1]);
        const u = chain.used.get(`${payer.toLowerCase()}:${nonce.toLowerCase()}`);
        return encodeAbiParameters([{ type: 'bool' }], [u !== undefined && u.block <= at]);
      }
      case 'eth_getLogs': {
        const f = params[0] as { topics?: (Hex | null)[]; fromBlock?: string; toBlock?: string };
        const [authorizer, nonce] = [f.topics?.[1], f.topics?.[2]];
        const from = blockNumber(f.fromBlock ?? '0x0');
        const to = blockNumber(f.toBlock ?? 'latest');
        return [...chain.used.values()]
          .filter(
            (u) =>
              u.block >= from &&
              u.block <= to &&
              (!authorizer || `0x${authorizer.slice(26)}`.toLowerCase() === u.payer) &&
              (!nonce || nonce.toLowerCase() === u.nonce),
          )
          .map((u, i) => ({
            address: chain.usdc,
            topics: encodeEventTopics({
              abi: EIP3009_ABI,
              eventName: 'AuthorizationUsed',
              args: { authorizer: u.payer, nonce: u.nonce },
            }),
            data: '0x',
            blockNumber: hex(u.block),
            blockHash: keccak256(toHex(`block:${u.block}`)),
            transactionHash: u.txHash,
            transactionIndex: '0x0',
            logIndex: hex(i),
            removed: false,
          }));
      }
      case 'eth_getTransactionReceipt': {
        const u = [...chain.used.values()].find((x) => x.txHash === String(params[0]).toLowerCase());
        if (!u) return null;
        const word = (a: string) => `0x${a.slice(2).padStart(64, '0')}`;
        const log = (i: number, topics: Hex[], data: Hex) => ({
          address: chain.usdc,
          topics,
          data,
          blockNumber: hex(u.block),
          blockHash: keccak256(toHex(`block:${u.block}`)),
          transactionHash: u.txHash,
          transactionIndex: '0x0',
          logIndex: hex(i),
          removed: false,
        });
        return {
          transactionHash: u.txHash,
          transactionIndex: '0x0',
          blockNumber: hex(u.block),
          blockHash: keccak256(toHex(`block:${u.block}`)),
          from: u.payer,
          to: chain.usdc,
          cumulativeGasUsed: '0x1',
          gasUsed: '0x1',
          effectiveGasPrice: '0x1',
          contractAddress: null,
          logsBloom: `0x${'00'.repeat(256)}`,
          type: '0x2',
          status: '0x1',
          // The token's two logs, in FiatToken's order: AuthorizationUsed, then the Transfer.
          logs: [
            log(0, [AUTHORIZATION_USED_TOPIC, word(u.payer), u.nonce] as Hex[], '0x'),
            log(1, [TRANSFER_TOPIC, word(u.payer), word(u.to)] as Hex[], toHex(BigInt(u.amountMicro), { size: 32 })),
          ],
        };
      }
      default:
        throw new Error(`method ${method} not supported by the fake chain`);
    }
  }

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (chain.down) {
      res.writeHead(503);
      res.end('down');
      return;
    }
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400);
      res.end('not JSON-RPC');
      return;
    }
    const one = (m: { id: unknown; method: string; params?: unknown[] }) => {
      chain.calls.set(m.method, (chain.calls.get(m.method) ?? 0) + 1);
      try {
        return { jsonrpc: '2.0', id: m.id, result: answer(m.method, m.params ?? []) };
      } catch (err) {
        return { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: (err as Error).message } };
      }
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(Array.isArray(body) ? body.map(one) : one(body)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  chain.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  chain.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return chain;
}
