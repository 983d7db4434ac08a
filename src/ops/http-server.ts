import { serve } from '@hono/node-server';
import { type Server, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ConnectionCap } from '../limits/connections.ts';
import type { Metrics } from '../lib/metrics.ts';

/**
 * The HTTP listener's own limits (issue 23.9), for an API whose requests are a line of headers
 * and at most 16 KB of JSON, and whose longest answer is a long-poll (`wait`, 25 s at most):
 *
 *   - headers must arrive within 10 s (Node's default is 60 s);
 *   - the whole request, headers and body, within 20 s (default 300 s), so a POST trickling its
 *     declared body is cut with 408 long before 90 s. Node counts this only until the request is
 *     received, not while the answer is pending, so a 25 s long-poll GET is never cut by it
 *     (test/ops/slow-clients.test.ts holds a GET past the timeout to pin this);
 *   - an idle kept-alive socket closes after 5 s;
 *   - the timeouts are checked every second (default 30 s, which would let a cut come 30 s late);
 *   - each client holds at most MAX_CONNECTIONS_PER_ADDRESS sockets (limits/connections.ts); one
 *     more gets a 429 JSON answer and is closed before any request is read.
 */
export const HTTP_TIMEOUTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 20_000,
  keepAliveTimeoutMs: 5_000,
  checkIntervalMs: 1_000,
};

type HttpServerOptions = {
  fetch: (req: Request) => Response | Promise<Response>;
  hostname: string;
  port: number;
  cap: ConnectionCap;
  disclaimer: string;
  metrics?: Metrics;
  /** Tests shorten them; main.ts uses HTTP_TIMEOUTS. */
  timeouts?: typeof HTTP_TIMEOUTS;
};

/** A whole HTTP/1.1 answer with Node's reason phrase for `status`; `extra` is more header lines. */
const jsonAnswer = (status: number, body: object, extra = ''): string => {
  const text = JSON.stringify(body);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n${extra}\r\n${text}`
  );
};

/** Node's own answers to requests it cut or could not parse, as the API's JSON errors. */
function clientErrorAnswer(code: string | undefined, disclaimer: string): string {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return jsonAnswer(408, { error: 'request not received in time', disclaimer });
  if (code === 'HPE_HEADER_OVERFLOW') return jsonAnswer(431, { error: 'request headers too large', disclaimer });
  return jsonAnswer(400, { error: 'malformed HTTP request', disclaimer });
}

export function startHttpServer(opts: HttpServerOptions, onListening?: (info: AddressInfo) => void): Server {
  const t = opts.timeouts ?? HTTP_TIMEOUTS;
  const server = serve(
    {
      fetch: opts.fetch,
      hostname: opts.hostname,
      port: opts.port,
      serverOptions: {
        headersTimeout: t.headersTimeoutMs,
        requestTimeout: t.requestTimeoutMs,
        keepAliveTimeout: t.keepAliveTimeoutMs,
        connectionsCheckingInterval: t.checkIntervalMs,
      },
    },
    onListening,
  ) as Server;
  const refused = opts.metrics?.counter(
    'isocast_connections_refused_total',
    'Connections refused because their client already held MAX_CONNECTIONS_PER_ADDRESS',
  );
  const tooMany = jsonAnswer(
    429,
    { error: 'too many open connections from this address', disclaimer: opts.disclaimer },
    'retry-after: 1\r\n',
  );
  // Before Node's own listener: a refused socket is closed before its parser could run a request.
  server.prependListener('connection', (socket: Socket) => {
    const { ok, key } = opts.cap.open(socket.remoteAddress);
    if (!ok) {
      refused?.inc();
      // A fresh socket's first small write goes straight to the kernel, so the answer is sent
      // even though the socket is destroyed at once; nothing the client sends is ever parsed.
      socket.write(tooMany);
      socket.destroy();
      return;
    }
    if (key !== null) socket.once('close', () => opts.cap.close(key));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const pending = (socket as unknown as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorAnswer(err.code, opts.disclaimer));
  });
  return server;
}
