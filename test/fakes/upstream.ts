import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Shared plumbing of the fake market and weather servers: a real HTTP server on 127.0.0.1 with a
 * free port, a request log, and faults tests switch on: an HTTP error status, a hang (the request
 * never gets an answer, to exercise client timeouts), a body that is not JSON, or JSON of the wrong
 * shape. A fault applies to the next `times` requests (all of them when `times` is omitted).
 */
export type Fault =
  | { kind: 'status'; status: number; times?: number; retryAfterSec?: number }
  | { kind: 'hang'; times?: number }
  | { kind: 'not-json'; times?: number }
  | { kind: 'wrong-shape'; times?: number }
  /** A slow upstream: the normal answer, after `ms`. */
  | { kind: 'delay'; ms: number; times?: number };

export type FakeRequest = { method: string; path: string; query: URLSearchParams; body: unknown; atMs: number };
/** `raw`: the body is sent as the text it is (a CSV), not as JSON. */
export type FakeAnswer = { status: number; body?: unknown; headers?: Record<string, string>; raw?: boolean };

export type FakeServer = {
  url: string;
  requests: FakeRequest[];
  fault(f: Fault | null): void;
  close(): Promise<void>;
};

export async function startFakeServer(name: string, handle: (req: FakeRequest) => FakeAnswer): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  let fault: (Fault & { left: number }) | null = null;
  const hung = new Set<ServerResponse>();

  const send = (res: ServerResponse, a: FakeAnswer) => {
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
    res.end(a.body === undefined ? '' : a.raw && typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://fake');
      let body: unknown;
      const text = Buffer.concat(chunks).toString('utf8');
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      const r: FakeRequest = {
        method: req.method ?? 'GET',
        path: u.pathname,
        query: u.searchParams,
        body,
        atMs: Date.now(),
      };
      requests.push(r);
      const f = fault;
      if (f) {
        if (f.times !== undefined && --f.left <= 0) fault = null;
        if (f.kind === 'hang') {
          hung.add(res);
          return;
        }
        if (f.kind === 'status')
          return send(res, {
            status: f.status,
            body: { error: `${name} fault` },
            headers: f.retryAfterSec ? { 'retry-after': String(f.retryAfterSec) } : {},
          });
        if (f.kind === 'not-json') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"truncated": [1, 2');
          return;
        }
        if (f.kind === 'wrong-shape')
          return send(res, { status: 200, body: { unexpected: true, data: [{ nonsense: 1 }] } });
        if (f.kind === 'delay') {
          setTimeout(() => {
            try {
              send(res, handle(r));
            } catch (err) {
              send(res, { status: 500, body: { error: (err as Error).message } });
            }
          }, f.ms);
          return;
        }
      }
      try {
        send(res, handle(r));
      } catch (err) {
        send(res, { status: 500, body: { error: (err as Error).message } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    fault: (f) => {
      fault = f ? { ...f, left: f.times ?? Number.POSITIVE_INFINITY } : null;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
