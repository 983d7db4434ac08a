/**
 * The instant fake facilitator both sides of the peer comparison settle through (its own
 * process, so its CPU is in neither server's figure). It speaks the x402 facilitator wire format
 * of both protocol versions, since isocast speaks v1 and `@x402/hono` 2.x speaks v2:
 * `GET /supported`, `POST /verify` -> `{isValid: true, payer}`, `POST /settle` ->
 * `{success: true, transaction, network, payer}` with a transaction hash unique per
 * (payer, nonce). It trusts every payload: what is measured is the servers, not this process.
 * test/fakes/facilitator.ts is the strict one the tests use (v1 schemas, failure modes).
 *
 * node scripts/bench/facilitator.ts '{"port":9100}'
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

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
const counts = { verify: 0, settle: 0, supported: 0, rejected: 0 };

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
    let body: {
      paymentPayload?: { payload?: { authorization?: { from?: string; nonce?: string } } };
      paymentRequirements?: { network?: string };
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
      return send(200, JSON.stringify({ success: true, transaction, network, payer: auth.from }));
    }
    send(404, '{"error":"not found"}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(input.port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
