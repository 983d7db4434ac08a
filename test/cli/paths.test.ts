import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFlags } from '../../src/lib/flags.ts';
import { serverUrl } from '../../src/buyer/cli/client.ts';
import { describeServers, receiptsFileFor } from '../../src/buyer/cli/receipts.ts';
import { stateHomeOf as stateHome } from '../../packages/isocast-client/src/mcp/config.ts';
import { stripControls, findControls } from '../../packages/isocast-client/src/index.ts';

const defaultReceiptsFile = (home: string) =>
  receiptsFileFor(parseFlags([], { strings: ['receipts'], booleans: [] }), {
    stdout() {},
    stderr() {},
    stateHome: home,
  });

test('receipts go under $XDG_STATE_HOME/isocast (absolute only), else ~/.local/state/isocast', () => {
  assert.equal(defaultReceiptsFile(stateHome({ XDG_STATE_HOME: '/s', HOME: '/h' })), '/s/isocast/receipts.json');
  assert.equal(
    defaultReceiptsFile(stateHome({ XDG_STATE_HOME: 'relative', HOME: '/h' })),
    '/h/.local/state/isocast/receipts.json',
  );
  assert.equal(defaultReceiptsFile(stateHome({ HOME: '/h' })), '/h/.local/state/isocast/receipts.json');
  const r = (server: string, city: string) => ({
    server,
    city,
    wallet: '0x',
    receiptToken: 't',
    paidThroughSeq: 1,
    savedAt: '',
  });
  assert.equal(
    describeServers([r('https://a', 'nyc'), r('https://a', 'paris'), r('http://127.0.0.1:1', 'nyc')]),
    'https://a (nyc, paris); http://127.0.0.1:1 (nyc)',
  );
});

test('only this machine counts as loopback for plain http', () => {
  const server = (h: string) =>
    serverUrl(parseFlags(['--server', `http://${h}:1`], { strings: ['server'], booleans: ['insecure'] }));
  for (const h of ['localhost', '127.0.0.1', '127.8.9.10', '[::1]', 'api.localhost']) assert.ok(server(h), h);
  for (const h of ['signals.example', '10.0.0.1', '127.0.0.1.nip.io', '[::ffff:7f00:1]', '0.0.0.0'])
    assert.throws(() => server(h), /refusing plain http/, h);
});

test('control characters: C0, DEL, C1 and bidi/format controls are removed and located', () => {
  assert.equal(stripControls('a\u001b[2Jb\u0007c\u009bd\u202ee\r\nf\u200bg'), 'a[2Jbcdef' + 'g');
  assert.equal(findControls({ accepts: [{ description: 'x\u001b]0;t\u0007' }] }), 'accepts[0].description');
  assert.equal(findControls({ ok: 'plain', n: 1 }), null);
});
