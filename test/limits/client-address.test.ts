import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressKey, clientKey, parseTrustedProxies } from '../../src/limits/client-address.ts';

test('without trusted proxies the socket peer is the client, whatever X-Forwarded-For says', () => {
  const none = parseTrustedProxies(undefined);
  assert.equal(clientKey('203.0.113.9', '1.2.3.4', none), '203.0.113.9');
  assert.equal(clientKey('::ffff:203.0.113.9', null, none), '203.0.113.9');
  // Unset, empty or only separators: nothing is trusted, not even the loopback.
  for (const list of [undefined, '', ' , ,']) {
    const empty = parseTrustedProxies(list);
    assert.equal(empty.empty, true);
    assert.equal(empty.has('127.0.0.1'), false);
    assert.equal(empty.has('::1'), false);
  }
});

test('behind a trusted proxy the right-most untrusted hop is the client', () => {
  const trusted = parseTrustedProxies('127.0.0.1, 10.0.0.0/8, ::1');
  // The client wrote "6.6.6.6" itself; the proxy appended the address it saw.
  assert.equal(clientKey('127.0.0.1', '6.6.6.6, 198.51.100.7', trusted), '198.51.100.7');
  // Two trusted hops (a load balancer in 10/8, then the local proxy).
  assert.equal(clientKey('::ffff:127.0.0.1', '198.51.100.7, 10.1.2.3', trusted), '198.51.100.7');
  assert.equal(clientKey('::1', '2001:db8::5', trusted), '2001:db8:0:0::/64');
  // An untrusted peer's header is ignored.
  assert.equal(clientKey('192.0.2.1', '198.51.100.7', trusted), '192.0.2.1');
  // Every hop trusted: the left-most one we could read.
  assert.equal(clientKey('127.0.0.1', '10.0.0.2, 10.0.0.3', trusted), '10.0.0.2');
  // Garbage stops the walk at the last readable hop.
  assert.equal(clientKey('127.0.0.1', 'nonsense, 10.0.0.3', trusted), '10.0.0.3');
  assert.equal(clientKey('127.0.0.1', '', trusted), '127.0.0.1');
});

test('TRUSTED_PROXIES entries must be IPs or CIDRs', () => {
  for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.1/', '::1/129', '1.2.3.4/8/9']) {
    assert.throws(() => parseTrustedProxies(bad), /not an IP address or CIDR/, bad);
  }
  assert.doesNotThrow(() => parseTrustedProxies('192.168.0.0/16,fd00::/8, 127.0.0.1'));
});

test('budget keys: an IPv6 client is its canonical /64; IPv4-mapped IPv6 is the IPv4 address (issue 23.7)', () => {
  const spellings = [
    '2001:db8:7:1::1',
    '2001:DB8:7:1::1',
    '2001:0db8:0007:0001:0000:0000:0000:0001',
    '2001:db8:7:1:0:0:0:1',
    '2001:db8:7:1::0.0.0.1',
    '2001:db8:7:1::1%eth0',
    ' 2001:db8:7:1::1 ',
  ];
  const neighbours = ['2001:db8:7:1::2', '2001:db8:7:1:ffff:ffff:ffff:ffff', '2001:db8:7:1:a:b:c:d', '2001:db8:7:1::'];
  for (const a of [...spellings, ...neighbours]) assert.equal(addressKey(a), '2001:db8:7:1::/64', a);
  assert.equal(addressKey('2001:db8:7:2::1'), '2001:db8:7:2::/64', 'the next /64 is another client');
  for (const a of ['::ffff:198.51.100.7', '::FFFF:198.51.100.7', '::ffff:c633:6407', '0:0:0:0:0:ffff:c633:6407'])
    assert.equal(addressKey(a), '198.51.100.7', a);
  assert.equal(addressKey('198.51.100.7'), '198.51.100.7');
  assert.equal(addressKey('198.51.100.8'), '198.51.100.8', 'IPv4 stays per address');
});

test('behind a trusted proxy, X-Forwarded-For hops are keyed the same way', () => {
  const trusted = parseTrustedProxies('127.0.0.1, ::1, 10.0.0.0/8');
  assert.equal(clientKey('127.0.0.1', '2001:DB8:7:1::9', trusted), '2001:db8:7:1::/64');
  assert.equal(clientKey('::1', '::ffff:198.51.100.7', trusted), '198.51.100.7');
  // A proxy writing a trusted hop in mapped hex form is still recognised as trusted.
  assert.equal(clientKey('127.0.0.1', '2001:db8:7:1::9, ::ffff:a00:1', trusted), '2001:db8:7:1::/64');
  assert.equal(clientKey('::ffff:127.0.0.1', '198.51.100.7', trusted), '198.51.100.7');
});
