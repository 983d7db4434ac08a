/**
 * The 402 offer alone: `GET /v1/signals` and `POST /v1/subscribe` without a payment, through the
 * real app (`app.request`, no socket), in mock mode. Prints 402s per second, CPU per 402 and the
 * bytes of each 402 (every header the app sets, as `name: value\r\n`, plus the body), so a change
 * to how the offer is built shows up here before the peer bench's noise.
 *
 *   node scripts/bench/offer-402.ts [--rounds 5] [--n 4000]
 */
import { testApp } from '../../test/helpers/app.ts';
import { median } from './util.ts';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const ROUNDS = arg('rounds', 5);
const N = arg('n', 4000);

const cleanups: (() => void)[] = [];
const { app } = testApp({ after: (fn) => cleanups.push(fn) });

const routes = [
  { name: 'GET /v1/signals', method: 'GET', path: '/v1/signals?city=nyc&count=20' },
  { name: 'POST /v1/subscribe', method: 'POST', path: '/v1/subscribe?city=nyc&count=20' },
] as const;

async function once(r: (typeof routes)[number]) {
  const res = await app.request(r.path, { method: r.method });
  if (res.status !== 402) throw new Error(`${r.name}: ${res.status}`);
  return res;
}

for (const r of routes) {
  const res = await once(r);
  const body = await res.text();
  let headerBytes = 0;
  res.headers.forEach((value, name) => {
    headerBytes += Buffer.byteLength(`${name}: ${value}\r\n`);
  });
  const bodyBytes = Buffer.byteLength(body);
  const rates: number[] = [];
  const cpus: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await (await once(r)).arrayBuffer();
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    rates.push((N * 1000) / ms);
    cpus.push((cpu.user + cpu.system) / N);
  }
  console.log(
    `${r.name.padEnd(20)} ${Math.round(median(rates))} 402/s, CPU ${Math.round(median(cpus))} us per 402; ` +
      `402 bytes: headers ${headerBytes} + body ${bodyBytes} = ${headerBytes + bodyBytes}`,
  );
}
for (const fn of cleanups.reverse()) fn();
