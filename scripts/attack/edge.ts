import { connect, type Socket } from 'node:net';
import type { AttackCase } from './types.ts';

/**
 * Edge attacks (issue 23 items 2, 7 and 9): path spellings that route to a handler while a
 * decision keys on another spelling, IPv6 neighbours and spellings as separate clients, and slow
 * clients holding sockets.
 */
const SPELLINGS = ['/v1/subscribe', '/v1/%73ubscribe', '/v1/subscrib%65', '/v1/%72eceipts'];

export const cases: AttackCase[] = [
  {
    name: 'percent-encoded operator paths (/%61dmin, /%6detrics) get no CORS',
    expected: 'no Access-Control-Allow-Origin on any spelling',
    fast: true,
    async run(ctx) {
      const seen: string[] = [];
      for (const path of ['/%61dmin/data.json', '/%61dmin', '/adm%69n/data.json', '/%6detrics']) {
        const a = await ctx.http(path);
        if (a.headers.get('access-control-allow-origin') !== null) seen.push(`${path} ${a.status}`);
      }
      return { observed: seen.length === 0 ? 'none' : `CORS on ${seen.join(', ')}`, ok: seen.length === 0 };
    },
  },
  {
    name: 'alternating percent-encoded spellings of the limited routes share one address budget',
    expected: 'past the burst (120) every spelling is refused 429',
    fast: true,
    async run(ctx) {
      const sent = 150;
      const refusedBySpelling = new Map<string, number>(SPELLINGS.map((s) => [s, 0]));
      const started = performance.now();
      // Ten at a time: the whole flood inside about a second, so the refill (300/min) stays small.
      for (let i = 0; i < sent; i += 10) {
        const batch = Array.from({ length: 10 }, (_, j) => SPELLINGS[(i + j) % SPELLINGS.length]!);
        const answers = await Promise.all(
          batch.map((path) => ctx.http(`${path}?city=${ctx.city}&count=2`, { method: 'POST' })),
        );
        answers.forEach((a, j) => {
          if (a.status === 429) refusedBySpelling.set(batch[j]!, refusedBySpelling.get(batch[j]!)! + 1);
        });
      }
      const refill = Math.ceil((5 * (performance.now() - started)) / 1000);
      const refused = [...refusedBySpelling.values()].reduce((x, y) => x + y, 0);
      const everySpelling = [...refusedBySpelling.values()].every((n) => n > 0);
      return {
        observed: `${refused} of ${sent} refused (refill allowed ${refill}); per spelling ${[...refusedBySpelling.values()].join('/')}`,
        ok: refused >= sent - 120 - refill - 2 && everySpelling,
      };
    },
  },
  {
    name: 'seven spellings and neighbours of one IPv6 /64 behind a trusted proxy share one budget',
    expected: 'burst 3: the 4th request from the /64 on is 429; the next /64 is another client',
    fast: false,
    async run(ctx) {
      const s = await ctx.startServer({
        TRUSTED_PROXIES: '127.0.0.1,::1',
        RATE_LIMIT_ADDRESS_PER_MIN: '1',
        RATE_LIMIT_ADDRESS_BURST: '3',
      });
      const one64 = [
        '2001:db8:5:5::1',
        '2001:DB8:5:5::1',
        '2001:0db8:0005:0005:0000:0000:0000:0001',
        '2001:db8:5:5::2',
        '2001:db8:5:5:dead:beef:1:1',
        '2001:db8:5:5::ffff:1.2.3.4',
        '2001:db8:5:5:ffff::9',
      ];
      const statuses: number[] = [];
      for (const xff of one64)
        statuses.push(
          (
            await ctx.http(`/v1/subscribe?city=${ctx.city}&count=2`, {
              base: s.baseUrl,
              method: 'POST',
              headers: { 'x-forwarded-for': xff },
            })
          ).status,
        );
      const next = (
        await ctx.http(`/v1/subscribe?city=${ctx.city}&count=2`, {
          base: s.baseUrl,
          method: 'POST',
          headers: { 'x-forwarded-for': '2001:db8:5:6::1' },
        })
      ).status;
      const refused = statuses.filter((x) => x === 429).length;
      return { observed: `${statuses.join(',')}; next /64: ${next}`, ok: refused === 4 && next !== 429 };
    },
  },
  {
    name: 'slowloris: 40 trickling sockets for 4 s from one address while another client buys',
    expected: 'sockets past MAX_CONNECTIONS_PER_ADDRESS get 429; /health answers 200 throughout',
    fast: false,
    async run(ctx) {
      const s = await ctx.startServer({ MAX_CONNECTIONS_PER_ADDRESS: '8' });
      const { port } = new URL(s.baseUrl);
      const deadline = Date.now() + 4_000;
      let refused = 0;
      const live = new Set<Socket>();
      const slot = (i: number): Promise<void> =>
        new Promise((done) => {
          // 127.0.0.2 is loopback too: the flood is another client than the buyer on 127.0.0.1.
          const sock = connect({ port: Number(port), host: '127.0.0.1', localAddress: '127.0.0.2' });
          live.add(sock);
          let got = '';
          const drip = setInterval(() => sock.writable && sock.write(i % 2 ? ' ' : 'X-a: b\r\n'), 200);
          sock.on('connect', () =>
            sock.write(
              i % 2
                ? `POST /v1/subscribe?city=${ctx.city}&count=2 HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n{`
                : 'GET /health HTTP/1.1\r\nHost: x\r\n',
            ),
          );
          sock.on('data', (d) => (got += d));
          sock.on('error', () => {});
          sock.on('close', () => {
            clearInterval(drip);
            live.delete(sock);
            if (got.startsWith('HTTP/1.1 429')) refused++;
            if (Date.now() < deadline) setTimeout(() => slot(i).then(done), 250);
            else done();
          });
        });
      const flood = Promise.all(Array.from({ length: 40 }, (_, i) => slot(i)));
      const stop = setTimeout(() => {
        for (const x of live) x.destroy();
      }, 4_000);
      let healthOk = 0;
      let healthBad = 0;
      while (Date.now() < deadline - 300) {
        const a = await ctx.http('/health', { base: s.baseUrl });
        if (a.status === 200) healthOk++;
        else healthBad++;
        await new Promise((r) => setTimeout(r, 100));
      }
      const challenge = await ctx.http(`/v1/subscribe?city=${ctx.city}&count=2`, { base: s.baseUrl, method: 'POST' });
      await flood;
      clearTimeout(stop);
      return {
        observed: `${refused} sockets refused 429; /health ${healthOk} ok, ${healthBad} not; purchase challenge ${challenge.status}`,
        ok: refused > 0 && healthBad === 0 && healthOk > 0 && challenge.status === 402,
      };
    },
  },
  {
    name: 'a POST trickling its declared body is cut',
    expected: '408 JSON within 22 s (requestTimeout 20 s), not held for minutes',
    fast: false,
    async run(ctx) {
      const { port } = new URL(ctx.baseUrl);
      const started = Date.now();
      const answer = await new Promise<string>((resolve) => {
        const sock = connect({ port: Number(port), host: '127.0.0.1', localAddress: '127.0.0.3' });
        let got = '';
        const drip = setInterval(() => sock.writable && sock.write(' '), 500);
        const giveUp = setTimeout(() => sock.destroy(), 60_000);
        sock.on('connect', () =>
          sock.write(
            `POST /v1/receipts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{`,
          ),
        );
        sock.on('data', (d) => (got += d));
        sock.on('error', () => {});
        sock.on('close', () => {
          clearInterval(drip);
          clearTimeout(giveUp);
          resolve(got);
        });
      });
      const s = (Date.now() - started) / 1000;
      const status = answer.split(' ')[1] ?? 'none';
      return {
        observed: `${status} after ${s.toFixed(1)} s`,
        ok: status === '408' && s <= 22 && answer.includes('"disclaimer"'),
      };
    },
  },
];
