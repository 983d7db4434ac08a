import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/app.ts';
import { ROOT } from '../../scripts/build-binary.ts';
import { zodEnglishOnly } from '../../scripts/sea/zod-english.ts';

const run = promisify(execFile);

/**
 * zod bundled the way the binary bundles it (scripts/sea/zod-english.ts): `z.locales` holds
 * English alone, and a refusal reads exactly as it does from the package itself.
 */
const APP = `
import { z } from 'zod';
const r = z.object({ count: z.number().int().min(1), city: z.string() }).safeParse({ count: 0.5 });
process.stdout.write(JSON.stringify({ locales: Object.keys(z.locales), issues: r.success ? [] : r.error.issues }));
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
  const english = JSON.parse(outputs.english!) as { locales: string[]; issues: { message: string }[] };
  const stock = JSON.parse(outputs.stock!) as { locales: string[]; issues: unknown[] };
  assert.deepEqual(english.locales, ['en']);
  assert.ok(stock.locales.length > 40, 'the package itself has every language');
  assert.deepEqual(english.issues, stock.issues);
  assert.ok(english.issues.length >= 2 && english.issues.every((i) => /^[ -~]+$/.test(i.message)));
});
