import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local Telegram Bot API server for tests: `POST /bot<token>/sendMessage` with the real answer
 * shapes. It records every message it accepted (with the receive instant) and can be told to
 * misbehave per chat: refuse with the platform's real error answers, rate-limit with retry_after,
 * fail with a 5xx, or accept the message and never answer (the ambiguous case).
 */
export type BotMessage = { chatId: string; text: string; atMs: number; body: Record<string, unknown> };

export type ChatBehaviour =
  | { kind: 'ok' }
  | { kind: 'not_found' }
  | { kind: 'blocked' }
  | { kind: 'rate_limited'; retryAfterSec: number; times?: number }
  | { kind: 'server_error'; times?: number }
  /** Records the message as received, then never answers. */
  | { kind: 'hang' }
  /** Records the message, then answers 200 with a body that is not a Bot API answer. */
  | { kind: 'garbage' };

export type FakeBotApi = {
  url: string;
  token: string;
  messages: BotMessage[];
  /** Every request, including refused ones. */
  requests: { chatId: string; path: string; atMs: number }[];
  behave(chatId: string, behaviour: ChatBehaviour): void;
  /** Resolves once `n` messages have been accepted. */
  waitForMessages(n: number, timeoutMs?: number): Promise<BotMessage[]>;
  close(): Promise<void>;
};

export const FAKE_BOT_TOKEN = '123456789:AAFakeTokenForTestsOnly_abcdefghijklmn';

export async function startFakeBotApi(opts: { token?: string } = {}): Promise<FakeBotApi> {
  const token = opts.token ?? FAKE_BOT_TOKEN;
  const messages: BotMessage[] = [];
  const requests: FakeBotApi['requests'] = [];
  const behaviours = new Map<string, ChatBehaviour>();
  const waiters: { n: number; resolve: (m: BotMessage[]) => void }[] = [];
  const hung = new Set<ServerResponse>();
  let messageId = 1;

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, code: number, description: string, parameters?: Record<string, unknown>) =>
    answer(res, code, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });

  const accept = (chatId: string, text: string, body: Record<string, unknown>) => {
    const msg = { chatId, text, atMs: Date.now(), body };
    messages.push(msg);
    for (const w of [...waiters]) {
      if (messages.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(messages.slice());
      }
    }
    return msg;
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = req.url ?? '';
    const m = /^\/bot([^/]+)\/(\w+)$/.exec(path);
    if (!m || m[1] !== token) return refuse(res, 401, 'Unauthorized');
    if (m[2] !== 'sendMessage' || req.method !== 'POST') return refuse(res, 404, 'Not Found');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return refuse(res, 400, "Bad Request: can't parse JSON");
    }
    const chatId = body.chat_id === undefined ? '' : String(body.chat_id);
    requests.push({ chatId, path: '/bot<token>/sendMessage', atMs: Date.now() });
    if (!chatId) return refuse(res, 400, 'Bad Request: chat_id is empty');
    if (typeof body.text !== 'string' || body.text.length === 0)
      return refuse(res, 400, 'Bad Request: message text is empty');
    if (body.text.length > 4096) return refuse(res, 400, 'Bad Request: message is too long');
    const b = behaviours.get(chatId) ?? { kind: 'ok' };
    const once = (left: number | undefined) => {
      if (left === undefined) return;
      if (left <= 1) behaviours.delete(chatId);
      else behaviours.set(chatId, { ...(b as { times: number }), times: left - 1 } as ChatBehaviour);
    };
    switch (b.kind) {
      case 'not_found':
        return refuse(res, 400, 'Bad Request: chat not found');
      case 'blocked':
        return refuse(res, 403, 'Forbidden: bot was blocked by the user');
      case 'rate_limited':
        once(b.times);
        return refuse(res, 429, `Too Many Requests: retry after ${b.retryAfterSec}`, { retry_after: b.retryAfterSec });
      case 'server_error':
        once(b.times);
        return refuse(res, 502, 'Bad Gateway');
      case 'hang':
        accept(chatId, body.text, body);
        hung.add(res);
        return;
      case 'garbage':
        accept(chatId, body.text, body);
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html>upstream proxy</html>');
      case 'ok': {
        accept(chatId, body.text, body);
        const id = messageId++;
        return answer(res, 200, {
          ok: true,
          result: {
            message_id: id,
            date: Math.floor(Date.now() / 1000),
            chat: { id: Number(chatId) || chatId, type: chatId.startsWith('-') ? 'group' : 'private' },
            text: body.text,
          },
        });
      }
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    messages,
    requests,
    behave: (chatId, behaviour) => {
      behaviours.set(chatId, behaviour);
    },
    waitForMessages: (n, timeoutMs = 10_000) => {
      if (messages.length >= n) return Promise.resolve(messages.slice());
      return new Promise((resolve, reject) => {
        const waiter = {
          n,
          resolve: (m: BotMessage[]) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`fake bot: ${messages.length} of ${n} messages after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
