import assert from 'node:assert/strict';

/**
 * Route tests as tables run through `app.request` (Hono's own tests and PocketBase's ApiScenario
 * do the same): no port, no socket, each row its own subtest so a failure names the row. Tests
 * of the wire itself (keep-alive, framing, held reads, real clients) keep a real server.
 */
export type Scenario = {
  name: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  expect: {
    /** The status, or `{ not }` a status it must not be. */
    status: number | { not: number };
    /** The whole JSON body, compared deeply. */
    json?: unknown;
    /** A header's exact value, a pattern it matches, or null for "absent". */
    headers?: Record<string, string | RegExp | null>;
    /** Patterns the body text matches (or, given as `{ not }`, must not). */
    body?: (RegExp | { not: RegExp })[];
    /** Anything else to check on the answer. */
    check?: (res: Response) => void | Promise<void>;
  };
};

type Requester = { request(path: string, init?: RequestInit): Response | Promise<Response> };
type Tester = { test(name: string, fn: () => Promise<void>): Promise<void> };

/** Sends one scenario's request and checks its expectations; returns the answer. */
export async function runScenario(app: Requester, s: Scenario): Promise<Response> {
  const body = s.body === undefined || typeof s.body === 'string' ? s.body : JSON.stringify(s.body);
  const res = await app.request(s.path, { method: s.method ?? 'GET', headers: s.headers, body });
  const where = `${s.method ?? 'GET'} ${s.path}`;
  const { status } = s.expect;
  if (typeof status === 'number') assert.equal(res.status, status, where);
  else assert.notEqual(res.status, status.not, where);
  for (const [name, want] of Object.entries(s.expect.headers ?? {})) {
    const got = res.headers.get(name);
    if (want instanceof RegExp) assert.match(got ?? '', want, `${where} ${name}`);
    else assert.equal(got, want, `${where} ${name}`);
  }
  if (s.expect.json !== undefined) assert.deepEqual(await res.clone().json(), s.expect.json, where);
  if (s.expect.body) {
    const text = await res.clone().text();
    for (const p of s.expect.body)
      if (p instanceof RegExp) assert.match(text, p, where);
      else assert.doesNotMatch(text, p.not, where);
  }
  await s.expect.check?.(res);
  return res;
}

/** Each scenario as its own subtest of `t`, in order (later rows may depend on earlier ones). */
export async function runScenarios(t: Tester, app: Requester, scenarios: Scenario[]): Promise<void> {
  for (const s of scenarios)
    await t.test(s.name, async () => {
      await runScenario(app, s);
    });
}
