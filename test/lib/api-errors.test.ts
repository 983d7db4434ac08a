import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as catalog from '../../src/lib/api-errors.ts';
import { ERRORS } from '../../src/lib/api-errors.ts';
import { ApiError } from '../../src/lib/errors.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { paymentCounters, type PurchaseOutcome } from '../../src/payments/outcomes.ts';

type ErrorCode = keyof typeof ERRORS;
const ROOT = join(import.meta.dirname, '..', '..');
const SPEC = '/work/shared/spec/service-spec.md';
const entries = Object.entries(ERRORS) as [ErrorCode, (typeof ERRORS)[ErrorCode]][];

function section7(spec: string): string {
  const start = spec.indexOf('## 7. Errors');
  const end = spec.indexOf('\n## 8.', start);
  assert.ok(start >= 0 && end > start, 'spec section 7 not found');
  return spec.slice(start, end);
}

test('every spec 7 entry is the spec string, verbatim, on a row with its status', (t) => {
  if (!existsSync(SPEC)) return t.skip(`${SPEC} is not on this machine`);
  const rows = section7(readFileSync(SPEC, 'utf8')).split('\n');
  for (const [code, e] of entries.filter(([, e]) => e.spec)) {
    const row = rows.find((r) => r.includes(`\`${e.message}\``));
    assert.ok(row, `${code}: "${e.message}" is not in spec section 7`);
    assert.match(row, new RegExp(`^\\| ${e.status} \\|`), `${code}: spec row has another status: ${row}`);
  }
});

test('every entry has its row in docs/errors.md: code, status, message, source', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
  for (const [code, e] of entries) {
    const row = `| \`${code}\` | ${e.status} | \`${e.message}\` | ${e.spec ? 'spec 7' : 'extension'} |`;
    assert.ok(doc.includes(row), `docs/errors.md lacks ${row}`);
  }
  const documented = [...doc.matchAll(/^\| `(\w+)` \| \d{3} \|/gm)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), Object.keys(ERRORS).sort(), 'docs/errors.md lists a code the catalog lacks');
});

test('codes are snake_case and messages unique', () => {
  for (const code of Object.keys(ERRORS)) assert.match(code, /^[a-z]+(_[a-z0-9]+)*$/);
  const messages = entries.map(([, e]) => e.message);
  assert.equal(new Set(messages).size, messages.length);
});

test('each constructor builds its code with the catalog status and message', () => {
  const built: ApiError[] = [];
  for (const [name, make] of Object.entries(catalog)) {
    if (typeof make !== 'function' || name === 'errorMessage' || name === 'paymentRequired' || name === 'withMore')
      continue;
    const err = (make as (...a: unknown[]) => unknown)(7, 7);
    assert.ok(err instanceof ApiError, `${name} does not build an ApiError`);
    built.push(err);
  }
  const challenge = { error: ERRORS.exhausted.message, x402Version: 1 };
  built.push(catalog.paymentRequired('exhausted', challenge, { 'payment-required': 'x' }));
  const applied = { error: ERRORS.already_applied.message, x402Version: 1 };
  built.push(catalog.paymentRequired('already_applied', applied, {}));
  for (const err of built) {
    const e = ERRORS[err.code as ErrorCode];
    assert.ok(e, `unknown code ${err.code}`);
    assert.equal(err.status, e.status, err.code);
    if (!/<\w+>/.test(e.message.replaceAll('<receiptToken>', ''))) assert.equal(err.message, e.message, err.code);
  }
  const codes = new Set(built.map((e) => e.code));
  for (const code of Object.keys(ERRORS)) assert.ok(codes.has(code), `no constructor builds ${code}`);
});

test('placeholders are filled, and the bodies keep the extra fields the spec lists', () => {
  assert.equal(catalog.fieldRequired('wallet').message, 'wallet is required');
  assert.equal(catalog.countTooLarge(10000, 0.01).message, 'count must be at most 10000');
  assert.deepEqual(catalog.countTooLarge(10000, 0.01).extra, { minSpendUsd: 0.01 });
  assert.equal(catalog.invalidQuery('', 'bad').message, 'invalid query parameter: bad');
  assert.deepEqual(catalog.entitlementFailed().extra, { refund: 'queued' });
  assert.deepEqual(catalog.unknownCity().extra, {});
  assert.deepEqual(catalog.rateLimited(3).headers, { 'retry-after': '3' });
});

test('the payment outcome metric keys on the outcome, never on an error text', () => {
  const reason = 'reworded';
  /** The `outcome` label isocast_payments_total counts one attempt under. */
  const paymentOutcome = (o: PurchaseOutcome): string => {
    const metrics = createMetrics();
    paymentCounters(metrics).attempt(o);
    const line = metrics
      .render()
      .split('\n')
      .find((l) => l.startsWith('isocast_payments_total{'));
    return /outcome="([^"]+)"\} 1$/.exec(line ?? '')?.[1] ?? 'none';
  };
  assert.equal(paymentOutcome({ kind: 'failed', reason }), 'settlement_failed');
  assert.equal(paymentOutcome({ kind: 'in_doubt', retryAfterSeconds: 10 }), 'in_doubt');
  assert.equal(paymentOutcome({ kind: 'refunded' }), 'entitlement_failed');
  assert.equal(paymentOutcome({ kind: 'refused', refusal: { why: 'binding_mismatch' } }), 'binding_mismatch');
  assert.equal(paymentOutcome({ kind: 'refused', refusal: { why: 'bound_elsewhere' } }), 'binding_mismatch');
  assert.equal(
    paymentOutcome({ kind: 'refused', refusal: { why: 'verification_failed', reason } }),
    'verification_failed',
  );
  assert.equal(paymentOutcome({ kind: 'refused', refusal: { why: 'identifier_conflict' } }), 'rejected');
});

test('no `new ApiError(` outside the catalog', () => {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, d.name);
      if (d.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(d.name) && !path.endsWith(join('lib', 'api-errors.ts'))) {
        readFileSync(path, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (line.includes('new ApiError(')) found.push(`${path.slice(ROOT.length + 1)}:${i + 1}`);
          });
      }
    }
  };
  walk(join(ROOT, 'src'));
  assert.deepEqual(found, []);
});
