import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientAddress, parseTrustedProxies } from '../../src/limits/client-address.ts';

test('without trusted proxies the socket peer is the client, whatever X-Forwarded-For says', () => {
  const none = parseTrustedProxies(undefined);
  assert.equal(clientAddress('203.0.113.9', '1.2.3.4', none), '203.0.113.9');
  assert.equal(clientAddress('::ffff:203.0.113.9', null, none), '203.0.113.9');
});

test('behind a trusted proxy the right-most untrusted hop is the client', () => {
  const trusted = parseTrustedProxies('127.0.0.1, 10.0.0.0/8, ::1');
  // The client wrote "6.6.6.6" itself; the proxy appended the address it saw.
  assert.equal(clientAddress('127.0.0.1', '6.6.6.6, 198.51.100.7', trusted), '198.51.100.7');
  // Two trusted hops (a load balancer in 10/8, then the local proxy).
  assert.equal(clientAddress('::ffff:127.0.0.1', '198.51.100.7, 10.1.2.3', trusted), '198.51.100.7');
  assert.equal(clientAddress('::1', '2001:db8::5', trusted), '2001:db8::5');
  // An untrusted peer's header is ignored.
  assert.equal(clientAddress('192.0.2.1', '198.51.100.7', trusted), '192.0.2.1');
  // Every hop trusted: the left-most one we could read.
  assert.equal(clientAddress('127.0.0.1', '10.0.0.2, 10.0.0.3', trusted), '10.0.0.2');
  // Garbage stops the walk at the last readable hop.
  assert.equal(clientAddress('127.0.0.1', 'nonsense, 10.0.0.3', trusted), '10.0.0.3');
  assert.equal(clientAddress('127.0.0.1', '', trusted), '127.0.0.1');
});

test('TRUSTED_PROXIES entries must be IPs or CIDRs', () => {
  for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.1/', '::1/129', '1.2.3.4/8/9']) {
    assert.throws(() => parseTrustedProxies(bad), /not an IP address or CIDR/, bad);
  }
  assert.doesNotThrow(() => parseTrustedProxies('192.168.0.0/16,fd00::/8, 127.0.0.1'));
});
