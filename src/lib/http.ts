import type { Context } from 'hono';
import type { z } from 'zod';
import { invalidJsonBody, invalidQuery } from './api-errors.ts';

/** Every JSON answer carries the disclaimer, a `c.env` binding the fetch wrapper adds (lib/fast-path.ts). */
export type AppEnv = { Bindings: { disclaimer: string } };
export type Ctx = Context<AppEnv>;

type ReplyInit = { status?: number; headers?: Record<string, string> };

/** A JSON response from text or UTF-8 bytes whose object already carries the disclaimer. */
export function replyJsonBytes(body: string | Uint8Array, { status = 200, headers }: ReplyInit = {}): Response {
  return new Response(body, { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

export function replyJson(c: Ctx, body: object, init: ReplyInit = {}): Response {
  return replyJsonBytes(JSON.stringify({ ...body, disclaimer: c.env.disclaimer }), init);
}

export function replyJsonText(c: Ctx, objectJson: string, init: ReplyInit = {}): Response {
  return replyJsonBytes(closeWithDisclaimer(c, objectJson), init);
}

/** A serialised object, or its closing members (`,"a":1}`), with the disclaimer before the final brace. */
export function closeWithDisclaimer(c: Ctx, json: string): string {
  return json.slice(0, -1) + (json.length > 2 ? ',' : '') + '"disclaimer":' + JSON.stringify(c.env.disclaimer) + '}';
}

/** The query parsed by the schema, or a 400 naming the first issue. */
export function parseQuery<S extends z.ZodType>(c: Ctx, schema: S): z.infer<S> {
  const result = schema.safeParse(c.req.query());
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw invalidQuery(issue.path.join('.'), issue.message);
}

export async function readJsonObject(c: Ctx): Promise<Record<string, unknown>> {
  const body: unknown = await c.req.json().catch(() => {
    throw invalidJsonBody();
  });
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidJsonBody();
  return body as Record<string, unknown>;
}
