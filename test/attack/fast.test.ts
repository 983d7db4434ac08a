import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModules, moduleSession } from '../../scripts/attack/harness.ts';

/**
 * Every attack case marked `fast` in every scripts/attack/*.ts module, against a real `serve` per
 * module (issue 23): an engineer who adds a case module gets its fast cases run here unchanged.
 */
const modules = await loadModules();

for (const mod of modules) {
  const fast = mod.cases.filter((c) => c.fast);
  if (fast.length === 0) continue;
  describe(`attack cases: ${mod.name}`, () => {
    let session: Awaited<ReturnType<typeof moduleSession>>;
    before(async () => {
      session = await moduleSession();
    });
    after(() => session?.close());
    for (const c of fast)
      test(c.name, { timeout: 30_000 }, async (t) => {
        const r = await session.run(c);
        t.diagnostic(`${Math.round(r.ms)} ms; observed: ${r.observed}`);
        assert.ok(r.ok, `expected: ${c.expected}\nobserved: ${r.observed}`);
      });
  });
}

test('the attack runner finds case modules', () => {
  assert.ok(modules.length > 0, 'no scripts/attack/*.ts exports cases');
});
