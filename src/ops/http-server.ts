import { serve } from '@hono/node-server';
import { type Server, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ConnectionCap } from '../limits/connections.ts';
import type { Metrics } from '../lib/metrics.ts';

/**
 * Far below Node's defaults so a slow client cannot hold a socket; the request timeout never cuts a 25 s
 * long-poll (it stops once the request is received); checks run every second so a cut is not 30 s late.
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
  timeouts?: typeof HTTP_TIMEOUTS;
};

const jsonAnswer = (status: number, body: object, extra = ''): string => {
  const text = JSON.stringify(body);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n${extra}\r\n${text}`
  );
};

/** Node's own answers to requests it cut or could not parse, as the API's JSON errors (else 400). */
const CLIENT_ERRORS: Record<string, [status: number, error: string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request not received in time'],
  HPE_HEADER_OVERFLOW: [431, 'request headers too large'],
};

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
    const [status, error] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'malformed HTTP request'];
    socket.end(jsonAnswer(status, { error, disclaimer: opts.disclaimer }));
  });
  return server;
}
