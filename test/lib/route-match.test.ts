import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pathOf, routeTable } from '../../src/lib/edge.ts';
import type { RouteDoc } from '../../src/lib/route-doc.ts';

const doc = (method: RouteDoc['method'], path: string): RouteDoc => ({
  method,
  path,
  summary: '',
  tags: [],
  responses: {},
});
const table = routeTable([
  doc('get', '/v1/cities'),
  doc('get', '/v1/cities/{slug}'),
  doc('post', '/v1/subscribe'),
  doc('post', '/v1/delivery/messenger'),
  doc('delete', '/v1/delivery/messenger'),
  doc('get', '/'),
  doc('get', '/a.b'),
]);

test('labels are route patterns in Hono syntax, and anything else is one label', () => {
  assert.equal(table.label('/v1/cities'), '/v1/cities');
  assert.equal(table.label('/v1/cities/'), '/v1/cities');
  assert.equal(table.label('/v1/cities/nyc'), '/v1/cities/:slug');
  assert.equal(table.label('/v1/cities/new%20york'), '/v1/cities/:slug');
  assert.equal(table.label('/v1/cities/nyc/extra'), 'unmatched');
  assert.equal(table.label('/'), '/');
  assert.equal(table.label('/a.b'), '/a.b');
  assert.equal(table.label('/aXb'), 'unmatched', 'a dot in a literal path is not a wildcard');
  assert.equal(table.label('/' + 'x'.repeat(10_000)), 'unmatched');
});

test('allowed lists every documented method of the path, GET with HEAD', () => {
  assert.deepEqual(table.allowed('/v1/cities/nyc'), ['GET', 'HEAD']);
  assert.deepEqual(table.allowed('/v1/subscribe'), ['POST']);
  assert.deepEqual(table.allowed('/v1/delivery/messenger/'), ['POST', 'DELETE']);
  assert.deepEqual(table.allowed('/nowhere'), []);
});

test('pathOf drops scheme, host, query and fragment', () => {
  assert.equal(pathOf('http://127.0.0.1:8402/v1/cities?x=1'), '/v1/cities');
  assert.equal(pathOf('http://h/v1/signals#frag'), '/v1/signals');
  assert.equal(pathOf('http://h'), '/');
  assert.equal(pathOf('http://h/?a=/b'), '/');
  assert.equal(pathOf('https://h:1/a/b/'), '/a/b/');
});
