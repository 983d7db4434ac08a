/**
 * The buyers' side of `scripts/bench/longpoll.ts`, in its own process so the server's figures are
 * its own: `n` long-poll reads held at once over keep-alive sockets; for each round, every read's
 * arrival time (performance.timeOrigin + now, comparable across processes on one machine) is
 * printed as one JSON line once all `n` have answered. The next round starts on a line on stdin.
 *
 * node scripts/bench/longpoll-buyers.ts '{"base":"http://127.0.0.1:P","token":"...","n":1000,"rounds":10,"since":1}'
 */
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';

const input = JSON.parse(process.argv[2] ?? '{}') as {
  base: string;
  token: string;
  city: string;
  n: number;
  rounds: number;
  since: number;
};
const { hostname, port } = new URL(input.base);
const agent = new Agent({ keepAlive: true, maxSockets: input.n });
const now = () => performance.timeOrigin + performance.now();

function read(since: number): Promise<{ at: number; status: number; seqs: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: hostname,
        port,
        path: `/v1/signals?city=${input.city}&since=${since}&wait=25`,
        headers: { authorization: `Bearer ${input.token}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          const at = now();
          const seqs = res.statusCode === 200 ? (JSON.parse(body) as { signals: unknown[] }).signals.length : -1;
          resolve({ at, status: res.statusCode ?? 0, seqs });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
for (let round = 0; round < input.rounds; round++) {
  const answers = await Promise.all(Array.from({ length: input.n }, () => read(input.since + round)));
  process.stdout.write(
    `${JSON.stringify({
      round,
      at: answers.map((a) => a.at),
      bad: answers.filter((a) => a.status !== 200 || a.seqs !== 1).length,
    })}\n`,
  );
  if (round + 1 < input.rounds) await lines.next();
}
agent.destroy();
process.exit(0);
