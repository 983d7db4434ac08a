/**
 * A deliberately small HTTP/1.1 load client for benchmarks whose server costs well under a
 * millisecond a request: one keep-alive `net` socket per lane, requests written as pre-built
 * bytes, answers parsed only as far as the status line, `Content-Length` and the body. undici's
 * `fetch` spent more CPU per request than the server it was measuring (the subscribe bench's
 * server sat 75 % idle behind it), so the figure was the client's.
 *
 * It refuses what it does not parse (chunked bodies, a missing Content-Length) rather than guess.
 */
import { connect, type Socket } from 'node:net';

export type LiteAnswer = { status: number; body: Buffer };

/** The bytes of one request: keep-alive, no body. */
export function requestBytes(host: string, method: string, path: string, headers: Record<string, string>): Buffer {
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  if (method === 'POST' || method === 'PUT') head += 'content-length: 0\r\n';
  return Buffer.from(`${head}\r\n`, 'latin1');
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection that sends one request at a time. */
export class LiteConnection {
  #socket: Socket;
  #buf: Buffer = Buffer.alloc(0);
  #waiting: { resolve(a: LiteAnswer): void; reject(e: Error): void } | null = null;
  #ready: Promise<void>;

  constructor(port: number, host = '127.0.0.1') {
    this.#socket = connect({ port, host, noDelay: true });
    this.#ready = new Promise((resolve, reject) => {
      this.#socket.once('connect', () => resolve());
      this.#socket.once('error', reject);
    });
    this.#socket.on('data', (chunk: Buffer) => {
      this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
      this.#parse();
    });
    this.#socket.on('error', (err) => this.#fail(err));
    this.#socket.on('close', () => this.#fail(new Error('connection closed by the server')));
  }

  #fail(err: Error): void {
    const w = this.#waiting;
    this.#waiting = null;
    w?.reject(err);
  }

  #parse(): void {
    const end = this.#buf.indexOf(HEADER_END);
    if (end < 0 || !this.#waiting) return;
    const head = this.#buf.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!m) {
      this.#fail(new Error(`answer without Content-Length: ${head.slice(0, 200)}`));
      return;
    }
    const total = end + 4 + Number(m[1]);
    if (this.#buf.length < total) return;
    const body = this.#buf.subarray(end + 4, total);
    this.#buf = this.#buf.subarray(total);
    const w = this.#waiting;
    this.#waiting = null;
    w.resolve({ status, body });
  }

  async send(request: Buffer): Promise<LiteAnswer> {
    await this.#ready;
    if (this.#waiting) throw new Error('one request at a time per connection');
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#socket.write(request);
    });
  }

  close(): void {
    this.#socket.removeAllListeners('close');
    this.#socket.destroy();
  }
}
