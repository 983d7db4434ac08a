/**
 * A lean buyer side for `scripts/bench/longpoll.ts` (`"client":"raw"`): the same `n` long-poll
 * reads as longpoll-buyers.ts, each on its own TCP socket, but framed by hand (one GET written,
 * the answer complete once its headers and Content-Length bytes arrived) instead of node:http's
 * client. Node's client costs a few hundred µs of CPU per answer (parser, IncomingMessage, agent
 * bookkeeping), so 1,000 answers in one process take longer than the server needs to write them;
 * this side measures when the bytes arrive. Every answer is still checked after the round (status
 * 200, one signal in the JSON body). Same protocol on stdin/stdout as longpoll-buyers.ts.
 *
 * node scripts/bench/longpoll-raw-buyers.ts '{"base":"http://127.0.0.1:P","token":"...","n":1000,"rounds":10,"since":1}'
 */
import { connect, type Socket } from 'node:net';
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
const now = () => performance.timeOrigin + performance.now();
const HEAD_END = Buffer.from('\r\n\r\n');

type Answer = { at: number; status: number; body: Buffer };
type Buyer = { socket: Socket; chunks: Buffer[]; got: number; need: number; done: ((a: Answer) => void) | null };

function frame(b: Buyer): void {
  const all = b.chunks.length === 1 ? b.chunks[0]! : Buffer.concat(b.chunks);
  b.chunks = [all];
  if (b.need < 0) {
    const end = all.indexOf(HEAD_END);
    if (end < 0) return;
    const head = all.subarray(0, end).toString('latin1');
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) throw new Error(`no Content-Length in ${head}`);
    b.need = end + 4 + Number(length[1]);
  }
  if (all.length < b.need) return;
  const at = now();
  const status = Number(all.subarray(9, 12).toString('latin1'));
  const body = all.subarray(all.indexOf(HEAD_END) + 4, b.need);
  const done = b.done!;
  b.chunks = [];
  b.got = 0;
  b.need = -1;
  b.done = null;
  done({ at, status, body });
}

const open = (): Promise<Buyer> =>
  new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), noDelay: true });
    const b: Buyer = { socket, chunks: [], got: 0, need: -1, done: null };
    socket.on('data', (chunk: Buffer) => {
      b.chunks.push(chunk);
      b.got += chunk.length;
      if (b.done) frame(b);
    });
    socket.once('connect', () => resolve(b));
    socket.once('error', reject);
  });

const read = (b: Buyer, since: number): Promise<Answer> =>
  new Promise((resolve) => {
    b.done = resolve;
    b.socket.write(
      `GET /v1/signals?city=${input.city}&since=${since}&wait=25 HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
        `Authorization: Bearer ${input.token}\r\n\r\n`,
    );
  });

const buyers: Buyer[] = [];
for (let i = 0; i < input.n; i++) buyers.push(await open());
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
for (let round = 0; round < input.rounds; round++) {
  const answers = await Promise.all(buyers.map((b) => read(b, input.since + round)));
  // Checked after every answer arrived, so the check costs no buyer its place.
  const bad = answers.filter(
    (a) => a.status !== 200 || (JSON.parse(a.body.toString('utf8')) as { signals: unknown[] }).signals.length !== 1,
  ).length;
  process.stdout.write(`${JSON.stringify({ round, at: answers.map((a) => a.at), bad })}\n`);
  if (round + 1 < input.rounds) await lines.next();
}
for (const b of buyers) b.socket.destroy();
process.exit(0);
