import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { keccak256, toHex, type Address, type Hex } from 'viem';
import { createProofReader } from '../../src/payments/settlers/chain-proof.ts';
import { FAKE_PAY_TO, startFakeChain } from '../fakes/chain-rpc.ts';

/**
 * Receipt reads asked together (concurrent facilitator successes) go to the RPC node as one
 * JSON-RPC batch; a node that does not answer batches call by call is asked one call at a time,
 * and each purchase is judged exactly as a lone read would be.
 */
async function proxiedChain(t: { after(fn: () => unknown): void }, opts: { batches: boolean }) {
  const chain = await startFakeChain();
  const seen: ('batch' | 'single')[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const batch = Array.isArray(JSON.parse(body));
    seen.push(batch ? 'batch' : 'single');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (batch && !opts.batches)
      return res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batches not allowed"}}');
    const up = await fetch(chain.url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    res.end(await up.text());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(async () => {
    server.closeAllConnections();
    server.close();
    await chain.close();
  });
  return { chain, seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function payments(chain: Awaited<ReturnType<typeof startFakeChain>>, n: number) {
  return Array.from({ length: n }, (_, i) => {
    const payer = `0x${(i + 1).toString(16).padStart(40, '0')}` as Address;
    const nonce = keccak256(toHex(`batch-${i}`)) as Hex;
    const { txHash } = chain.use(payer, nonce, { amountMicro: 20_000 });
    return {
      txHash,
      expect: { payer, nonce, terms: { validBefore: 2_000_000_000, payTo: FAKE_PAY_TO, value: 20_000n } },
    };
  });
}

for (const batches of [true, false]) {
  test(`concurrent receipt reads ${batches ? 'share one batch request' : 'fall back to one call each when the node refuses batches'}`, async (t) => {
    const { chain, seen, url } = await proxiedChain(t, { batches });
    const reader = createProofReader({ rpcUrl: url, usdc: chain.usdc });
    const paid = payments(chain, 3);
    // One of them pays someone else: judged on its own receipt inside the batch.
    const other = payments(chain, 4)[3]!;
    const wrong = { ...other, expect: { ...other.expect, terms: { ...other.expect.terms, value: 30_000n } } };
    const proofs = await Promise.all([...paid, wrong].map((p) => reader.confirm(p.txHash, p.expect)));
    assert.deepEqual(
      proofs.slice(0, 3).map((p) => p.state),
      ['used', 'used', 'used'],
    );
    assert.equal(proofs[3]!.state, 'spent');
    assert.deepEqual(seen, batches ? ['batch'] : ['batch', 'single', 'single', 'single', 'single']);
    // A lone read is a plain call, as before.
    seen.length = 0;
    assert.equal((await reader.confirm(paid[0]!.txHash, paid[0]!.expect)).state, 'used');
    assert.deepEqual(seen, ['single']);
  });
}
