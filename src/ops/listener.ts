import type { Server } from 'node:http';
import { StartRefused } from '../db/files.ts';
import { parseTrustedProxies } from '../limits/client-address.ts';
import { createConnectionCap } from '../limits/connections.ts';
import { starting } from '../lib/api-errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { disclaimerText } from '../terms/terms.ts';
import { startHttpServer } from './http-server.ts';

/** The app's fetch; `env` is @hono/node-server's bindings (the socket), passed through untouched. */
type Fetch = (req: Request, env?: never) => Response | Promise<Response>;

/** Requests held for a starting server; beyond it a 503 with Retry-After (each holds its socket). */
const MAX_WAITING = 1_000;
/** A flood of failed accepts logs one line per interval, with how many it covers. */
const ACCEPT_LOG_INTERVAL_MS = 60_000;

/** Why a bind failed, as the one line and fix the operator needs; undefined: not an operator's error. */
function listenProblem(err: NodeJS.ErrnoException, host: string, port: number): string | undefined {
  if (err.code === 'EADDRINUSE')
    return `${host}:${port} is already in use (another isocast, or another program: \`ss -ltnp 'sport = :${port}'\` shows which); stop it or choose another port with PORT=<n> or --port <n>`;
  if (err.code === 'EACCES')
    return `${host}:${port}: permission denied (ports below 1024 need privileges); use PORT=8402`;
  if (err.code === 'EADDRNOTAVAIL')
    return `HOST ${host} is not an address of this machine; use HOST=127.0.0.1 or 0.0.0.0`;
  return undefined;
}

/**
 * Bound first, so a taken port refuses the start before anything is created, and the bound socket serves
 * (a probe's second bind cost about 3 ms a start). Requests accepted before `open` wait for the app.
 */
export function openListener(
  config: {
    HOST: string;
    PORT: number;
    MAX_CONNECTIONS_PER_ADDRESS: number;
    TRUSTED_PROXIES?: string;
    TERMS_URL: string;
  },
  ops: { metrics: Metrics; logger: Logger },
  maxWaiting = MAX_WAITING,
): Promise<{ server: Server; open(fetch: Fetch): void }> {
  let serveFetch: Fetch | undefined;
  const waiting: (() => void)[] = [];
  const disclaimer = disclaimerText(config.TERMS_URL);
  const busy = () => {
    const e = starting(1);
    const body = JSON.stringify({ error: e.message, ...e.extra, disclaimer });
    return new Response(body, {
      status: e.status,
      headers: { 'content-type': 'application/json; charset=utf-8', ...e.headers },
    });
  };
  const server = startHttpServer({
    fetch: (req: Request, env?: never) => {
      if (serveFetch) return serveFetch(req, env);
      if (waiting.length >= maxWaiting) return busy();
      // A fetch that throws rejects this request alone, as it would unparked; thrown inside the
      // wake-up it would end the process.
      return new Promise<Response>((resolve, reject) =>
        waiting.push(() => {
          try {
            resolve(serveFetch!(req, env));
          } catch (err) {
            reject(err);
          }
        }),
      );
    },
    hostname: config.HOST,
    port: config.PORT,
    cap: createConnectionCap({
      max: config.MAX_CONNECTIONS_PER_ADDRESS,
      trustedProxies: parseTrustedProxies(config.TRUSTED_PROXIES),
    }),
    metrics: ops.metrics,
    disclaimer,
  });
  const open = (fetch: Fetch) => {
    serveFetch = fetch;
    // After the caller's synchronous rest of the start (timers, signal handlers), as a request
    // arriving now would be.
    if (waiting.length > 0)
      setImmediate(() => {
        for (const wake of waiting.splice(0)) wake();
      });
  };
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      const problem = listenProblem(err, config.HOST, config.PORT);
      reject(problem ? new StartRefused(problem) : err);
    };
    server.once('error', failed);
    server.once('listening', () => {
      server.off('error', failed);
      server.on('error', acceptFailed(ops));
      resolve({ server, open });
    });
  });
}

/**
 * Once listening, an 'error' is a failed accept (ENOBUFS, ENOMEM, a firewall's EPERM; libuv absorbs EMFILE):
 * counted and logged, and the server goes on, since exiting would let whoever can provoke one stop the service.
 */
function acceptFailed({ metrics, logger }: { metrics: Metrics; logger: Logger }) {
  const failures = metrics.counter('isocast_accept_errors_total', 'Connections the listener failed to accept');
  let loggedAt = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  return (err: NodeJS.ErrnoException) => {
    const code = err.code ?? 'unknown';
    failures.inc({ code });
    unlogged++;
    const now = Date.now();
    if (now - loggedAt < ACCEPT_LOG_INTERVAL_MS) return;
    logger.warn('accept failed', { code, failures: unlogged });
    loggedAt = now;
    unlogged = 0;
  };
}
