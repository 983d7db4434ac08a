import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundedMap } from '../../src/lib/bounded-map.ts';

test('boundedMap keeps what it made and starts again empty at its cap', () => {
  const m = boundedMap<number>(3);
  let made = 0;
  const make = (v: number) => () => {
    made++;
    return v;
  };
  assert.equal(m.memo('a', make(1)), 1);
  assert.equal(m.memo('a', make(9)), 1, 'a kept value is not made again');
  m.memo('b', make(2));
  m.memo('c', make(3));
  assert.equal(made, 3);
  // Full: the next new key empties it first, so it never holds more than the cap.
  assert.equal(m.memo('d', make(4)), 4);
  assert.equal(m.memo('d', make(8)), 4, 'the key that restarted it is kept');
  assert.equal(m.memo('a', make(5)), 5, 'an entry from before the restart is made again');
  assert.equal(m.memo('b', make(6)), 6, 'every entry from before the restart is gone');
  assert.equal(made, 6);
});
