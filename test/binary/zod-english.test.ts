import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { globSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { z as zod } from 'zod';
import { tempDir } from '../helpers/app.ts';
import { ROOT } from '../../scripts/build-binary.ts';
import { ZOD_LEFT_OUT, zodEnglishOnly, zodUsedNames } from '../../scripts/sea/zod-english.ts';

const run = promisify(execFile);

/**
 * zod bundled the way the binary bundles it (scripts/sea/zod-english.ts): `z.locales` holds
 * English alone, and a refusal reads exactly as it does from the package itself.
 */
const APP = `
import { z } from 'zod';
const r = z.object({ count: z.number().int().min(1), city: z.string() }).safeParse({ count: 0.5 });
const schema = z.toJSONSchema(z.object({ at: z.iso.datetime(), n: z.number().int().min(1) }));
process.stdout.write(JSON.stringify({ locales: Object.keys(z.locales), issues: r.success ? [] : r.error.issues, schema }));
`;

test('bundled like the binary: zod carries English alone and its messages do not change', async (t) => {
  const dir = tempDir(t, 'isocast-zod-english-');
  const entry = join(dir, 'entry.ts');
  writeFileSync(entry, APP);
  const { build } = await import('esbuild');
  const outputs: Record<string, string> = {};
  for (const [name, plugins] of [
    ['english', [zodEnglishOnly]],
    ['stock', []],
  ] as const) {
    const out = join(dir, `${name}.cjs`);
    await build({
      entryPoints: [entry],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      nodePaths: [join(ROOT, 'node_modules')],
      plugins: [...plugins],
      logLevel: 'silent',
    });
    outputs[name] = (await run(process.execPath, [out])).stdout;
  }
  const english = JSON.parse(outputs.english!) as { locales: string[]; issues: { message: string }[]; schema: unknown };
  const stock = JSON.parse(outputs.stock!) as { locales: string[]; issues: unknown[]; schema: unknown };
  assert.deepEqual(english.locales, ['en']);
  assert.ok(stock.locales.length > 40, 'the package itself has every language');
  assert.deepEqual(english.issues, stock.issues);
  assert.deepEqual(english.schema, stock.schema, 'z.toJSONSchema (the OpenAPI document) is unchanged');
  assert.ok(english.issues.length >= 2 && english.issues.every((i) => /^[ -~]+$/.test(i.message)));
});

test('the zod functions the binary leaves out are called nowhere in the service or the buyer package', () => {
  // `compile` alone is an ordinary word; the others are zod's own names.
  const names = ZOD_LEFT_OUT.join('|');
  const called = new RegExp(`\\bz\\.(${names})\\b|\\b(${names.replace('compile|', '')})\\b`);
  const files = globSync('{src,packages/isocast-client/src}/**/*.ts', { cwd: ROOT });
  assert.ok(files.length > 100);
  for (const f of files) assert.doesNotMatch(readFileSync(join(ROOT, f), 'utf8'), called, f);
});

test("the binary's `z` holds every name the sources read from it as a value, and no type-only name", () => {
  const names = new Set(zodUsedNames());
  const files = globSync('{src,packages/isocast-client/src}/**/*.ts', { cwd: ROOT });
  // A call `z.name(` is always a value use; the AST scan must have seen each.
  for (const f of files)
    for (const m of readFileSync(join(ROOT, f), 'utf8').matchAll(/(?<![\w.])z\.([a-z]\w*)\(/g))
      assert.ok(names.has(m[1]!), `${f}: z.${m[1]} is missing from the binary's z`);
  // Each is a real zod export (a misspelling would be undefined in the binary and in source alike).
  for (const n of names) assert.notEqual((zod as Record<string, unknown>)[n], undefined, n);
  // Used only in types: nothing to carry.
  for (const n of ['infer', 'ZodType', 'output', 'core']) assert.equal(names.has(n), false, n);
  assert.ok(names.has('object') && names.has('toJSONSchema'));
});
