import { Agent, request } from 'node:http';
import { privateKeyToAccount } from 'viem/accounts';
import { keccak256, toHex } from 'viem';
import { ROUTE_DOCS, MAX_BODY_BYTES } from '../../src/app.ts';
import { built } from '../../src/lib/route-doc.ts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { rng, type Rng } from '../chaos/driver.ts';

/**
 * A seeded HTTP fuzzer over every route in ROUTE_DOCS: wrong methods, path parameters and query
 * values of every odd kind (unicode, negative, enormous, repeated, percent-garbage), X-Payment
 * headers that are bad base64, base64 garbage or real signed payments with one field broken,
 * bearer junk, huge headers, and bodies that are invalid JSON, wrong types or oversized (with and
 * without a Content-Length). It speaks raw node:http so nothing is normalised on the way.
 */
export type FuzzStats = {
  requests: number;
  byStatus: Record<string, number>;
  byKind: Record<string, number>;
  /** Total ms spent per kind (for finding slow paths). */
  msByKind: Record<string, number>;
  serverErrors: string[];
  missingDisclaimer: string[];
  transportErrors: number;
  jsonObjects: number;
};

type Req = {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  chunked?: boolean;
};

const SLUGS = [
  'nyc',
  'london',
  'NYC',
  'panama-city',
  'no-such-city',
  '',
  ' ',
  'ny%63',
  '%00',
  '%FF%FE',
  '..%2F..%2Fetc%2Fpasswd',
  'Zürich',
  '東京',
  '🌡️',
  'a'.repeat(3000),
  "nyc'--",
  '<script>',
  'null',
  'undefined',
  '__proto__',
  'constructor',
];
const NUMBERS = [
  '0',
  '1',
  '2',
  '3',
  '20',
  '100',
  '-1',
  '-2',
  '-0',
  '+5',
  '2.5',
  '1e3',
  '1e309',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x10',
  '007',
  '9007199254740993',
  '99999999999999999999999999999',
  '10000',
  '10001',
  '4294967297',
  ' 5',
  '5 ',
  '٣',
  '５',
  '',
  'true',
  '[]',
  '{}',
];
const WRONG_METHODS = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'GET'];
const UNICODE = ['é', 'ü', '东京', '🌡️🔥', '\u202e', '\u0000', '\uFEFF', 'Ω≈ç√', '\ud83d'];

/** Percent-encodes, except a lone surrogate (which encodeURIComponent refuses) becomes its raw UTF-8-ish bytes. */
function percent(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%BD' + encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''));
  }
}

export async function makeFuzzer(seed: number, baseUrl: string): Promise<{ next(): Req }> {
  const r: Rng = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  // Real signed payments to break one piece at a time, so decoding goes deep before failing.
  const account = privateKeyToAccount(keccak256(toHex(`isocast-fuzz-${seed}`)));
  const signed: string[] = [];
  for (const [city, count] of [
    ['nyc', 2],
    ['london', 20],
    ['nyc', 100],
  ] as const) {
    const res = await fetch(`${baseUrl}/v1/subscribe?city=${city}&count=${count}`, { method: 'POST' });
    signed.push((await payFor402(await res.json(), account)).xPayment);
  }

  // Sometimes raw (pre-encoded garbage such as %FF%FE or %00 reaches the router as is), else encoded.
  const enc = (s: string) => (/^[\u0021-\u007e]*$/.test(s) && r() < 0.5 ? s.replace(/[#?&=]/g, '') : percent(s));
  const PAID = ROUTE_DOCS.filter((d) => d.path === '/v1/subscribe' || d.path === '/v1/signals');
  const fill = (path: string) => path.replace(/\{[^}]+\}/g, () => enc(pick(SLUGS)));
  const value = (): string => {
    const k = r();
    if (k < 0.35) return pick(NUMBERS);
    if (k < 0.6) return pick(SLUGS);
    if (k < 0.75) return pick(UNICODE).repeat(1 + Math.floor(r() * 5));
    if (k < 0.85) return String(Math.floor((r() - 0.5) * 2 ** (r() * 80)));
    return 'x'.repeat(Math.floor(r() * 5000));
  };
  const query = (keys: string[]): string => {
    const parts: string[] = [];
    for (const key of [...keys, ...(r() < 0.3 ? [pick(['foo', 'city[]', 'count', '__proto__', '', '%00'])] : [])]) {
      if (r() < 0.15) continue;
      parts.push(`${enc(key)}=${enc(value())}`);
      if (r() < 0.1) parts.push(`${enc(key)}=${enc(value())}`); // repeated key
    }
    if (r() < 0.05) parts.push('%E0%A4%A', '=&&=', 'city');
    return parts.length ? `?${parts.join('&')}` : '';
  };
  const xPayment = (): string => {
    const k = r();
    if (k < 0.15)
      return '!!!not base64!!!' + pick(UNICODE.filter((u) => !u.includes('\u0000') && !/[^\u0020-\u00ff]/.test(u)));
    if (k < 0.3)
      return Buffer.from(
        JSON.stringify(pick([null, 1, 'x', [], {}, { x402Version: 1 }, { x402Version: '1', scheme: 'exact' }])),
      ).toString('base64');
    if (k < 0.4)
      return Buffer.from(Array.from({ length: Math.floor(r() * 400) }, () => Math.floor(r() * 256))).toString('base64');
    if (k < 0.5) return pick(signed).slice(0, Math.floor(r() * 200));
    if (k < 0.55) return 'A'.repeat(9_000);
    const json = JSON.parse(Buffer.from(pick(signed), 'base64').toString('utf8'));
    const a = json.payload.authorization;
    const field = pick([
      'from',
      'to',
      'value',
      'validAfter',
      'validBefore',
      'nonce',
      'signature',
      'network',
      'x402Version',
    ]);
    const junk = pick<unknown>([
      -1,
      0,
      '-1',
      '1e309',
      '0x',
      'ü',
      null,
      true,
      [],
      {},
      '115792089237316195423570985008687907853269984665640564039457584007913129639936',
      '9'.repeat(200),
      'nyc',
    ]);
    if (field === 'signature') json.payload.signature = r() < 0.5 ? junk : json.payload.signature.slice(0, -2) + 'ff';
    else if (field === 'network' || field === 'x402Version') json[field] = junk;
    else a[field] = junk;
    return Buffer.from(JSON.stringify(json)).toString('base64');
  };
  const deliveryBody = (): Buffer => {
    const k = r();
    if (k < 0.1) return Buffer.from('{"wallet": "0x', 'utf8');
    if (k < 0.2) return Buffer.from(JSON.stringify(pick([null, 1, 'x', [], [1, 2], true])));
    if (k < 0.25) return Buffer.from('['.repeat(6_000) + ']'.repeat(6_000));
    const anyVal = () =>
      pick<unknown>([
        value(),
        Number(pick(NUMBERS)),
        -1,
        1e308,
        null,
        true,
        [],
        {},
        { a: 1 },
        '0x' + 'ab'.repeat(20),
        '0x' + '12'.repeat(65),
      ]);
    const body: Record<string, unknown> = {};
    for (const f of ['wallet', 'chatId', 'citySlug', 'action', 'signature', 'timestamp']) {
      if (r() < 0.15) continue;
      body[f] =
        r() < 0.5
          ? anyVal()
          : (
              {
                wallet: account.address,
                chatId: '12345',
                citySlug: pick(['', 'nyc', 'nowhere']),
                action: pick(['set', 'delete']),
                signature: '0x' + 'ab'.repeat(65),
                timestamp: Math.floor(Date.now() / 1000),
              } as Record<string, unknown>
            )[f];
    }
    return Buffer.from(JSON.stringify(body), 'utf8');
  };

  return {
    next(): Req {
      const k = r();
      // Payment and bearer junk goes mostly where it is read: the paid routes.
      const doc = k >= 0.12 && k < 0.38 && r() < 0.75 ? pick(PAID) : pick(ROUTE_DOCS);
      const shape = doc.query && built(doc.query).shape;
      const keys = shape ? Object.keys(shape) : [];
      let method = doc.method.toUpperCase();
      let kind = 'query';
      const headers: Record<string, string> = {};
      let body: Buffer | undefined;
      let chunked = false;
      if (k < 0.12) {
        method = pick(WRONG_METHODS.filter((m) => m !== method));
        kind = 'wrong-method';
      } else if (k < 0.3) {
        headers['x-payment'] = xPayment();
        kind = 'x-payment';
      } else if (k < 0.38) {
        headers.authorization = pick([
          'Bearer ',
          'Bearer isr_' + 'a'.repeat(16) + '_' + 'b'.repeat(43),
          'Bearer ' + value(),
          'Basic Zm9vOmJhcg==',
          'bearer\tisr_x',
        ]).replace(/[^\u0020-\u00ff\t]/g, '?');
        kind = 'bearer';
      } else if (k < 0.41) {
        headers['x-huge'] = 'h'.repeat(17 * 1024 + Math.floor(r() * 20_000));
        kind = 'huge-header';
      } else if (k < 0.47) {
        method = doc.method === 'post' ? 'POST' : pick(['POST', 'PUT']);
        body = Buffer.alloc(MAX_BODY_BYTES + 1 + Math.floor(r() * 50_000), 0x7b);
        chunked = r() < 0.5;
        kind = chunked ? 'oversized-chunked' : 'oversized';
      }
      if (doc.method === 'post' && body === undefined) {
        body = deliveryBody();
        headers['content-type'] = pick([
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded',
          '',
        ]);
        if (kind === 'query') kind = 'body';
      }
      if (!headers['content-type']) delete headers['content-type'];
      // Half the payment junk comes with a valid query, so it reaches the decoder and the verifier.
      const q =
        (kind === 'x-payment' || kind === 'bearer') && keys.includes('city') && r() < 0.5
          ? `?city=${pick(['nyc', 'london'])}&count=${pick(['2', '20', '100'])}${r() < 0.5 ? `&since=${pick(NUMBERS.slice(0, 12))}` : ''}`
          : query(keys);
      return { kind, method, path: fill(doc.path) + q, headers, body, chunked };
    },
  };
}

export async function runHttpFuzz(opts: {
  baseUrl: string;
  count: number;
  seed: number;
  concurrency?: number;
  onProgress?: (n: number) => void;
}): Promise<FuzzStats> {
  const stats: FuzzStats = {
    requests: 0,
    byStatus: {},
    byKind: {},
    msByKind: {},
    serverErrors: [],
    missingDisclaimer: [],
    transportErrors: 0,
    jsonObjects: 0,
  };
  const fuzzer = await makeFuzzer(opts.seed, opts.baseUrl);
  const url = new URL(opts.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency ?? 16 });
  let issued = 0;
  let done = 0;
  const one = (req: Req) =>
    new Promise<void>((resolve) => {
      const headers: Record<string, string | number> = { ...req.headers };
      if (req.body && !req.chunked) headers['content-length'] = req.body.length;
      const r = request(
        { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent, timeout: 15_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
            if (status >= 500)
              stats.serverErrors.push(
                `${req.kind} ${req.method} ${req.path.slice(0, 120)} -> ${status} ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`,
              );
            if (/json/.test(String(res.headers['content-type'])) && req.method !== 'HEAD') {
              let parsed: unknown;
              try {
                parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
              } catch {
                parsed = undefined;
              }
              if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
                stats.jsonObjects++;
                // The OpenAPI document carries it as `x-disclaimer` (docs/discovery.md: OpenAPI forbids other root fields).
                const key = req.path.startsWith('/openapi.json') && status === 200 ? 'x-disclaimer' : 'disclaimer';
                if (typeof (parsed as Record<string, unknown>)[key] !== 'string')
                  stats.missingDisclaimer.push(`${req.method} ${req.path.slice(0, 120)} -> ${status}`);
              }
            }
            resolve();
          });
          res.on('error', () => {
            stats.transportErrors++;
            resolve();
          });
        },
      );
      r.on('timeout', () => r.destroy(new Error('timeout')));
      // The server may answer 413/431 and close before an oversized request is fully written.
      r.on('error', () => {
        stats.transportErrors++;
        resolve();
      });
      if (req.body) r.end(req.body);
      else r.end();
    });
  const worker = async () => {
    while (issued < opts.count) {
      const req = fuzzer.next();
      issued++;
      stats.requests++;
      stats.byKind[req.kind] = (stats.byKind[req.kind] ?? 0) + 1;
      const t0 = performance.now();
      await one(req);
      stats.msByKind[req.kind] = Math.round((stats.msByKind[req.kind] ?? 0) + performance.now() - t0);
      if (++done % 1000 === 0) opts.onProgress?.(done);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 16 }, worker));
  agent.destroy();
  return stats;
}
