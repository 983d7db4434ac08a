import type { z } from 'zod';

/** The schemas that validate each route make its OpenAPI entry; a function `schema`, `query`, `params` or `body` is built on first use. */
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
  query?: z.ZodObject | (() => z.ZodObject);
  params?: z.ZodObject | (() => z.ZodObject);
  body?: z.ZodType | (() => z.ZodType);
  security?: string[][];
  responses: Record<number, ResponseDoc>;
};

/** A RouteDoc schema, built now if it was given as a function. */
export const built = <T extends z.ZodType>(schema: T | (() => T)): T =>
  typeof schema === 'function' ? schema() : schema;

/** A RouteDoc from its `method path` line, its one tag and the rest, so each router's list skips the repeated keys. */
export function routeDoc(
  route: `${RouteDoc['method']} /${string}`,
  tag: string,
  rest: Omit<RouteDoc, 'method' | 'path' | 'tags'>,
): RouteDoc {
  const [method, path] = route.split(' ') as [RouteDoc['method'], string];
  return { method, path, tags: [tag], ...rest };
}
