import { startFakeServer, type FakeServer } from './upstream.ts';

/**
 * The CLOB's public book endpoints with the live wire shapes: `POST /books` (array of books),
 * `GET /book`, `POST /midpoints` ({token: "mid"}), `POST /prices` ({token: {SIDE: n}}).
 * Prices and sizes are decimal strings; bids are listed ascending and asks descending, so the best
 * levels are the LAST elements, as on the real CLOB. Unknown tokens are left out of /books.
 */
export type Level = { price: number; size: number };
export type FakeBook = { bids: Level[]; asks: Level[]; last?: number };

export type FakeClob = FakeServer & {
  setBook(tokenId: string, book: FakeBook): void;
  /** A two-sided YES book around `mid` with `spread`, and the mirrored NO book. */
  quote(yesToken: string, noToken: string, mid: number, spread?: number): void;
};

const dec = (n: number) => String(Math.round(n * 1000) / 1000);

export async function startFakeClob(): Promise<FakeClob> {
  const books = new Map<string, FakeBook>();
  const wire = (id: string, b: FakeBook) => ({
    market: '0x' + '0'.repeat(64),
    asset_id: id,
    timestamp: String(Date.now()),
    hash: '0x' + '1'.repeat(40),
    bids: [...b.bids].sort((x, y) => x.price - y.price).map((l) => ({ price: dec(l.price), size: dec(l.size) })),
    asks: [...b.asks].sort((x, y) => y.price - x.price).map((l) => ({ price: dec(l.price), size: dec(l.size) })),
    min_order_size: '5',
    tick_size: '0.001',
    neg_risk: true,
    last_trade_price: b.last === undefined ? '' : dec(b.last),
  });
  const bestBid = (b: FakeBook) => Math.max(...b.bids.map((l) => l.price));
  const bestAsk = (b: FakeBook) => Math.min(...b.asks.map((l) => l.price));
  const ids = (body: unknown) =>
    (Array.isArray(body) ? body : []).map((x) => String((x as { token_id?: unknown }).token_id));

  const server = await startFakeServer('clob', (req) => {
    if (req.method === 'POST' && req.path === '/books') {
      return {
        status: 200,
        body: ids(req.body)
          .filter((id) => books.has(id))
          .map((id) => wire(id, books.get(id)!)),
      };
    }
    if (req.method === 'GET' && req.path === '/book') {
      const id = req.query.get('token_id') ?? '';
      const b = books.get(id);
      return b
        ? { status: 200, body: wire(id, b) }
        : { status: 404, body: { error: 'No orderbook exists for the requested token id' } };
    }
    if (req.method === 'POST' && req.path === '/midpoints') {
      const out: Record<string, string> = {};
      for (const id of ids(req.body)) {
        const b = books.get(id);
        if (b) out[id] = dec((bestBid(b) + bestAsk(b)) / 2);
      }
      return { status: 200, body: out };
    }
    if (req.method === 'POST' && req.path === '/prices') {
      const out: Record<string, Record<string, number>> = {};
      for (const x of Array.isArray(req.body) ? req.body : []) {
        const { token_id: id, side } = x as { token_id: string; side: 'BUY' | 'SELL' };
        const b = books.get(id);
        if (b) out[id] = { ...out[id], [side]: side === 'BUY' ? bestBid(b) : bestAsk(b) };
      }
      return { status: 200, body: out };
    }
    return { status: 404, body: { error: 'not found' } };
  });
  return Object.assign(server, {
    setBook: (id: string, b: FakeBook) => {
      books.set(id, b);
    },
    quote: (yes: string, no: string, mid: number, spread = 0.02) => {
      const bid = Math.max(0.001, mid - spread / 2);
      const ask = Math.min(0.999, mid + spread / 2);
      const p = (x: number) => Math.min(0.999, Math.max(0.001, x));
      books.set(yes, {
        bids: [
          { price: p(bid - 0.01), size: 300 },
          { price: bid, size: 120 },
        ],
        asks: [
          { price: p(ask + 0.01), size: 200 },
          { price: ask, size: 80 },
        ],
        last: mid,
      });
      books.set(no, {
        bids: [
          { price: p(1 - ask - 0.01), size: 200 },
          { price: 1 - ask, size: 80 },
        ],
        asks: [
          { price: p(1 - bid + 0.01), size: 300 },
          { price: 1 - bid, size: 120 },
        ],
        last: 1 - mid,
      });
    },
  });
}
