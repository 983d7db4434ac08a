/**
 * The start-up floor: a Node 24 hello-world HTTP server, built into a SEA by the same
 * scripts/build-binary.ts path as isocast (scripts/bench/startup.ts). Answers 200 to anything.
 */
import { createServer } from 'node:http';

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('ok\n');
});
server.listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
