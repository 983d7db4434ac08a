import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

/**
 * Every command line the docs print works as printed from a checkout (issue 27.6): no
 * `node src/main.ts ...` (the machine's own Node may be 20, which cannot run .ts files) and no
 * `npm run cli` without `--silent` (npm's banner would precede the CLI's output).
 */
const DOCS = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

function fencedLines(text: string): string[] {
  const out: string[] = [];
  let inside = false;
  for (const line of text.split('\n')) {
    if (/^```/.test(line)) inside = !inside;
    else if (inside) out.push(line);
  }
  return out;
}

test("no command line in the docs needs the machine Node to run TypeScript, none prints npm's banner", () => {
  const bad: string[] = [];
  for (const file of DOCS) {
    for (const line of fencedLines(readFileSync(file, 'utf8'))) {
      if (/(^|[;&|]\s*|\$\(\s*)node\s+(src|scripts)\/\S+\.ts\b/.test(line)) bad.push(`${file}: ${line}`);
      if (/npm run cli\b/.test(line)) bad.push(`${file}: ${line} (use npm run --silent cli --)`);
    }
    for (const m of readFileSync(file, 'utf8').matchAll(/`(npm run cli\b[^`]*)`/g)) bad.push(`${file}: ${m[1]}`);
  }
  assert.deepEqual(bad, []);
});

test("npm run --silent cli prints only the CLI's output", () => {
  const r = spawnSync('npm', ['run', '--silent', 'cli', '--', '--version'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^isocast \d+\.\d+\.\d+\n$/);
});
