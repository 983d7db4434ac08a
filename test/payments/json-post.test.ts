import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createJsonPost } from '../../src/lib/http-client.ts';

/** The facilitator's HTTP client against a real local server: reuse, deadlines, bad answers. */
async function server(t: TestContext, handle: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  let connections = 0;
  const s = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    handle(req, res, Buffer.concat(chunks).toString('utf8'));
  });
  s.on('connection', () => {
    connections++;
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  t.after(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, connections: () => connections };
}

test('posts JSON with the headers, reads any status with its JSON, and reuses one connection', async (t) => {
  const seen: { path?: string; auth?: string; type?: string; body: string }[] = [];
  const srv = await server(t, (req, res, body) => {
    seen.push({ path: req.url, auth: req.headers.authorization, type: req.headers['content-type'], body });
    res.writeHead(req.url === '/base/settle' ? 400 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: req.url }));
  });
  const client = createJsonPost('facilitator', {
    baseUrl: `${srv.url.replace('http://', 'http://user:pa%3Ass@')}/base/`,
  });
  t.after(() => client.close());
  assert.deepEqual(await client.post('/verify', { a: 1 }, 2_000), {
    status: 200,
    json: { ok: '/base/verify' },
    text: '{"ok":"/base/verify"}',
  });
  assert.deepEqual(await client.post('/settle', { b: 2 }, 2_000), {
    status: 400,
    json: { ok: '/base/settle' },
    text: '{"ok":"/base/settle"}',
  });
  assert.equal(srv.connections(), 1, 'keep-alive: the second call reused the socket');
  assert.deepEqual(
    seen.map((s) => s.body),
    ['{"a":1}', '{"b":2}'],
  );
  assert.equal(seen[0]!.auth, `Basic ${Buffer.from('user:pa:ss').toString('base64')}`);
  assert.equal(seen[0]!.type, 'application/json');
});

test('a non-JSON answer is json undefined, not an error (the caller decides)', async (t) => {
  const srv = await server(t, (_req, res) => {
    res.writeHead(502);
    res.end('<html>bad gateway</html>');
  });
  const client = createJsonPost('facilitator', { baseUrl: srv.url });
  t.after(() => client.close());
  assert.deepEqual(await client.post('/settle', {}, 2_000), {
    status: 502,
    json: undefined,
    text: '<html>bad gateway</html>',
  });
});

test('the deadline covers the whole exchange: headers sent, body stalled -> timed out', async (t) => {
  const srv = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"succ');
  });
  const client = createJsonPost('facilitator', { baseUrl: srv.url });
  t.after(() => client.close());
  const started = Date.now();
  await assert.rejects(client.post('/settle', {}, 150), {
    name: 'UpstreamError',
    message: 'timed out after 150 ms',
    upstream: 'facilitator',
  });
  assert.ok(Date.now() - started < 1_500);
});

test('a reset before or during the answer, and an oversized answer, are errors', async (t) => {
  let mode = 'reset';
  const srv = await server(t, (_req, res) => {
    if (mode === 'reset') return res.socket?.destroy();
    if (mode === 'mid') {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"a":');
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    res.writeHead(200);
    res.end(Buffer.alloc((1 << 20) + 10, 0x20));
  });
  const client = createJsonPost('facilitator', { baseUrl: srv.url });
  t.after(() => client.close());
  await assert.rejects(client.post('/settle', {}, 2_000), (err: Error) => err.message.startsWith('request failed: '));
  mode = 'mid';
  await assert.rejects(client.post('/settle', {}, 2_000), (err: Error) =>
    /body read failed|request failed/.test(err.message),
  );
  mode = 'big';
  await assert.rejects(client.post('/settle', {}, 2_000), (err: Error) => /answer larger than/.test(err.message));
  mode = 'ok';
});
