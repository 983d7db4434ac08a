import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { payFor402 } from '../packages/isocast-client/src/index.ts';
import { startServer } from '../test/chaos/server.ts';

/**
 * `node scripts/measure-repeat-purchase.ts [--n 20]`: the same wallet buys the same bundle (nyc,
 * 20 signals) N times back to back against a real `isocast serve` process (mock settlement),
 * each purchase end to end: POST for the 402, sign the EIP-3009 authorization, POST with
 * X-Payment, 200. Prints one JSON line with the per-purchase times and the ceiling steps, which
 * must be N distinct purchases (issue 24: each settled purchase moves the bundle's salt).
 */
const { values } = parseArgs({ options: { n: { type: 'string', default: '20' } } });
const n = Number(values.n);
const dataDir = mkdtempSync(join(tmpdir(), 'isocast-repeat-'));
const server = await startServer({ dataDir, env: { PAYMENT_MODE: 'mock', FEED: 'sim', LOG_LEVEL: 'warn' } });
try {
  const account = privateKeyToAccount(`0x${'a1'.repeat(32)}`);
  const url = `${server.baseUrl}/v1/subscribe?city=nyc&count=20`;
  const times: number[] = [];
  const ceilings: number[] = [];
  for (let i = 0; i < n + 3; i++) {
    const t0 = performance.now();
    const challenge = await (await fetch(url, { method: 'POST' })).json();
    const p = await payFor402(challenge, account);
    const res = await fetch(url, { method: 'POST', headers: { 'x-payment': p.xPayment } });
    const body = (await res.json()) as { paidThroughSeq: number; idempotent: boolean };
    const ms = performance.now() - t0;
    if (res.status !== 200 || body.idempotent) throw new Error(`purchase ${i}: ${res.status} ${JSON.stringify(body)}`);
    if (i >= 3) {
      times.push(ms);
      ceilings.push(body.paidThroughSeq);
    } // the first three warm up
  }
  const sorted = [...times].sort((a, b) => a - b);
  const q = (p: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(1));
  const steps = ceilings.slice(1).map((c, i) => c - ceilings[i]!);
  process.stdout.write(
    `${JSON.stringify({ purchases: n, sameBundle: 'nyc x20', p50Ms: q(0.5), p95Ms: q(0.95), maxMs: q(1), ceilingSteps: [...new Set(steps)], distinctNonces: n })}\n`,
  );
} finally {
  await server.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
}
