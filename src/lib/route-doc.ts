import type { z } from 'zod';

/**
 * What a router says about each route it serves. The same zod schemas that validate requests and
 * shape responses are listed here, and discovery/ turns the list into the OpenAPI document, so the
 * document cannot drift from the code. `path` uses OpenAPI `{param}` syntax.
 */
/** `schema` may be a function: a shape only the documents use is then built on first use, not at start. */
type ResponseDoc = {
  description: string;
  schema?: z.ZodType | (() => z.ZodType);
  contentType?: string;
  headers?: Record<string, string>;
};

export type RouteDoc = {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  query?: z.ZodObject;
  params?: z.ZodObject;
  body?: z.ZodType;
  /** Security requirement names (`x402`, `receipt`); none means free. */
  security?: string[][];
  responses: Record<number, ResponseDoc>;
};
