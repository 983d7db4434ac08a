import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak256, toHex } from 'viem';
import {
  AUTHORIZATION_CANCELED_TOPIC,
  AUTHORIZATION_USED_TOPIC,
  TRANSFER_TOPIC,
  settlementVerdict,
  type ProofLog,
} from '../../src/payments/settlers/chain-proof.ts';

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAYER = '0x1111111111111111111111111111111111111111';
const PAY_TO = '0x2222222222222222222222222222222222222222';
const OTHER = '0x3333333333333333333333333333333333333333';
const NONCE = `0x${'ab'.repeat(32)}`;
const expect = { usdc: USDC, payer: PAYER, payTo: PAY_TO, value: 100_000n, nonce: NONCE };

const word = (a: string) => `0x${a.slice(2).toLowerCase().padStart(64, '0')}`;
const used = (nonce = NONCE, payer = PAYER, address = USDC): ProofLog => ({
  address,
  topics: [AUTHORIZATION_USED_TOPIC, word(payer), nonce],
  data: '0x',
});
const canceled = (): ProofLog => ({
  address: USDC,
  topics: [AUTHORIZATION_CANCELED_TOPIC, word(PAYER), NONCE],
  data: '0x',
});
const transfer = (from: string, to: string, value: bigint, address = USDC): ProofLog => ({
  address,
  topics: [TRANSFER_TOPIC, word(from), word(to)],
  data: `0x${value.toString(16).padStart(64, '0')}`,
});

test('the event topics are the keccak of their signatures', () => {
  assert.equal(TRANSFER_TOPIC, keccak256(toHex('Transfer(address,address,uint256)')));
  assert.equal(AUTHORIZATION_USED_TOPIC, keccak256(toHex('AuthorizationUsed(address,bytes32)')));
  assert.equal(AUTHORIZATION_CANCELED_TOPIC, keccak256(toHex('AuthorizationCanceled(address,bytes32)')));
});

test('paid: AuthorizationUsed(payer, nonce) followed at once by Transfer(payer, payTo, price) from the token', () => {
  assert.deepEqual(settlementVerdict([used(), transfer(PAYER, PAY_TO, 100_000n)], expect), { kind: 'paid' });
  // Case-insensitive addresses and hex, other logs around it.
  const upper = {
    ...expect,
    payTo: PAY_TO.toUpperCase().replace('0X', '0x'),
    nonce: NONCE.toUpperCase().replace('0X', '0x'),
  };
  const logs = [transfer(OTHER, OTHER, 5n), used(), transfer(PAYER, PAY_TO, 100_000n), used(`0x${'cd'.repeat(32)}`)];
  assert.deepEqual(settlementVerdict(logs, upper), { kind: 'paid' });
});

test('a cancelled nonce is not charged', () => {
  const v = settlementVerdict([canceled()], expect);
  assert.equal(v.kind, 'not-paid');
  assert.match((v as { reason: string }).reason, /cancelled/);
});

test('a nonce used with any other transfer is not charged', () => {
  for (const next of [
    transfer(PAYER, PAYER, 0n), // value-0 transfer to self
    transfer(PAYER, PAY_TO, 99_999n), // short
    transfer(PAYER, PAY_TO, 100_001n), // not the price
    transfer(PAYER, OTHER, 100_000n), // another payee
    transfer(OTHER, PAY_TO, 100_000n), // someone else's money
    transfer(PAYER, PAY_TO, 100_000n, OTHER), // another token
  ]) {
    const v = settlementVerdict([used(), next], expect);
    assert.equal(v.kind, 'not-paid', JSON.stringify(next));
  }
  assert.equal(settlementVerdict([used()], expect).kind, 'not-paid');
});

test('one real transfer cannot vouch for a nonce used elsewhere in the same transaction', () => {
  // A contract batching a value-0 self transfer with our nonce and a real payment of another nonce.
  const logs = [used(), transfer(PAYER, PAYER, 0n), used(`0x${'cd'.repeat(32)}`), transfer(PAYER, PAY_TO, 100_000n)];
  assert.equal(settlementVerdict(logs, expect).kind, 'not-paid');
  // A plain transfer to payTo with no authorization proves nothing about the nonce.
  assert.equal(settlementVerdict([transfer(PAYER, PAY_TO, 100_000n)], expect).kind, 'absent');
});

test('logs about another payer, another nonce, or from another contract say nothing', () => {
  assert.equal(settlementVerdict([], expect).kind, 'absent');
  assert.equal(
    settlementVerdict([used(`0x${'cd'.repeat(32)}`), transfer(PAYER, PAY_TO, 100_000n)], expect).kind,
    'absent',
  );
  assert.equal(settlementVerdict([used(NONCE, OTHER), transfer(OTHER, PAY_TO, 100_000n)], expect).kind, 'absent');
  assert.equal(
    settlementVerdict([used(NONCE, PAYER, OTHER), transfer(PAYER, PAY_TO, 100_000n, OTHER)], expect).kind,
    'absent',
  );
  // Junk topics and data do not throw.
  const junk: ProofLog = { address: USDC, topics: [AUTHORIZATION_USED_TOPIC, '0x12', NONCE], data: 'zz' };
  assert.equal(settlementVerdict([junk, { ...transfer(PAYER, PAY_TO, 1n), data: 'zz' }], expect).kind, 'absent');
  assert.equal(settlementVerdict([used(), { ...transfer(PAYER, PAY_TO, 1n), data: '0xzz' }], expect).kind, 'not-paid');
});
