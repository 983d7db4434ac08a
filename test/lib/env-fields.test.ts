import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flag, httpUrl, intIn, matching, number, oneOf, parseShape, text } from '../../src/lib/env-fields.ts';

const problem = (r: { ok: boolean; problem?: string }) => (r.ok ? null : r.problem);

test('numbers: Number() reading, integers in range, each failure in words', () => {
  const port = intIn(0, 65535);
  assert.deepEqual(port.parse(' 80 '), { ok: true, value: 80 });
  assert.deepEqual(port.parse('1e3'), { ok: true, value: 1000 });
  assert.equal(problem(port.parse('eighty')), 'must be a number');
  assert.equal(problem(port.parse('Infinity')), 'must be a number');
  assert.equal(problem(port.parse('   ')), 'must be a number');
  assert.equal(problem(port.parse('1.5')), 'must be an integer');
  assert.equal(problem(port.parse('-1')), 'must be at least 0');
  assert.equal(problem(port.parse('70000')), 'must be at most 65535');
  const speed = number().check((n) => (n > 0 ? null : 'must be positive'));
  assert.deepEqual(speed.parse('2.5'), { ok: true, value: 2.5 });
  assert.equal(problem(speed.parse('0')), 'must be positive');
});

test('strings, choices, booleans and URLs', () => {
  assert.equal(problem(text().parse('')), 'must not be empty');
  assert.equal(problem(matching(/^0x[0-9a-f]{4}$/, 'must be 2 bytes of hex').parse('0x12')), 'must be 2 bytes of hex');
  assert.deepEqual(oneOf(['mock', 'live']).parse('live'), { ok: true, value: 'live' });
  assert.equal(problem(oneOf(['mock', 'live']).parse('free')), '"free" is not one of mock, live');
  assert.equal(problem(oneOf(['mock', 'live']).parse('lve')), '"lve" is not one of mock, live; did you mean live?');
  assert.deepEqual(
    ['yes', '1', 'true', 'no', '0', 'false'].map((v) => flag().parse(v)).map((r) => r.ok && r.value),
    [true, true, true, false, false, false],
  );
  assert.equal(problem(flag().parse('maybe')), 'must be one of true, false, 1, 0, yes, no');
  assert.deepEqual(httpUrl().parse('https://a.example/b///'), { ok: true, value: 'https://a.example/b' });
  assert.equal(problem(httpUrl().parse('nope')), 'must be an absolute URL');
  assert.equal(problem(httpUrl().parse('ftp://a.example')), 'must be http(s)');
});

test('a shape: defaults and unset optionals, every problem reported in the shape order', () => {
  const shape = { PORT: intIn(0, 9).default(8), HOST: text().optional(), MODE: oneOf(['a', 'b']).default('a') };
  assert.equal(shape.PORT.defaultValue, 8);
  assert.equal(shape.HOST.defaultValue, undefined);
  assert.deepEqual(parseShape(shape, {}), {
    value: { PORT: 8, HOST: undefined, MODE: 'a' },
    problems: [],
    bad: new Set(),
  });
  // The good fields still come back, so the caller can check them too (all problems in one run).
  assert.deepEqual(parseShape(shape, { MODE: 'c', PORT: '10', HOST: 'h' }), {
    value: { PORT: 8, HOST: 'h', MODE: 'a' },
    problems: ['PORT: must be at most 9', 'MODE: "c" is not one of a, b'],
    bad: new Set(['PORT', 'MODE']),
  });
});
