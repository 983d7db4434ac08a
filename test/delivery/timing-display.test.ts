import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatSignalMessage } from '../../src/delivery/message.ts';
import { formatSignal } from '../../src/buyer/cli/output.ts';
import { signalSchema } from '../../src/signals/schemas.ts';
import { signalFixture } from './fixtures.ts';

/** A bucket with an empty book, as the poller stores it (docs/signal-engine.md "Odds semantics"). */
function withEmptyBook() {
  const s = signalFixture();
  return signalSchema().parse({
    ...s,
    buckets: s.buckets!.map((b) =>
      b.label === '88°F or higher' ? { ...b, yes: 1, no: 1, midpoint: 0.5, noQuote: true } : b,
    ),
  });
}

test('chat message: a noQuote bucket reads "no quote", never 100%; the station report time is shown', () => {
  const text = formatSignalMessage(withEmptyBook(), { termsUrl: 'https://isocast.example/terms.txt' });
  assert.match(text, /88°F or higher {2}no quote \(empty book\)/);
  assert.doesNotMatch(text, /100%/);
  assert.match(text, /84-85°F {2}41%/, 'the other buckets keep their prices');
  assert.match(text, /Observed 15:02:00 UTC \(source wu, station report 14:51:00 UTC\)/);
  const old = formatSignalMessage(signalFixture({ reportedAt: null }), {
    termsUrl: 'https://isocast.example/terms.txt',
  });
  assert.match(old, /Observed 15:02:00 UTC \(source wu\)\n/);
});

test('CLI line: a noQuote bucket is not listed among the likeliest buckets', () => {
  const line = formatSignal(withEmptyBook());
  assert.match(line, /odds 84-85°F 0\.41, 86-87°F 0\.35/);
  assert.doesNotMatch(line, /88°F or higher 1\.00/);
});
