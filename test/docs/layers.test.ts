import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { tsFilesUnder } from '../helpers/source-files.ts';

// The layer table of docs/architecture.md is the rule; this test reads it from the page, so the
// page and the check cannot drift. Every import under src/ (static, `export ... from`, dynamic
// `import()`, type-only too) must point to its own layer's folder, or down, or sideways where the
// table's last column says "each other"; the few crossings the page lists under "Known
// crossings" are the only exceptions, and a listed crossing that no longer occurs fails too.

const root = join(import.meta.dirname, '..', '..');
const PACKAGE = 'packages/isocast-client/src/';
const markdown = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

interface Layer {
  rank: number;
  name: string;
  /** Folders (`lib/`), top-level files of src/ (`config.ts`), a path from the repo root
   *  (`packages/.../`), or a file-name pattern (`*routes.ts`), which wins over its folder. */
  members: string[];
  sideways: boolean;
}

function section(title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`);
  assert.ok(start !== -1, `docs/architecture.md has a "## ${title}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end === -1 ? undefined : end);
}

function layerTable(): Layer[] {
  const layers: Layer[] = [];
  for (const line of section('Layers').split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const m = /^(\d+)\. (.+)$/.exec(cells[1] ?? '');
    if (!m) continue;
    layers.push({
      rank: Number(m[1]),
      name: m[2]!,
      members: [...(cells[2] ?? '').matchAll(/`([^`]+)`/g)].map((x) => x[1]!),
      sideways: /each other/.test(cells[3] ?? ''),
    });
  }
  assert.ok(layers.length >= 5, 'the layer table has its rows');
  return layers;
}

/** `from -> to` pairs listed as `` `a.ts` -> `b.ts` `` bullets under "Known crossings". */
function knownCrossings(): Set<string> {
  const text = section('Layers');
  const start = text.indexOf('Known crossings');
  assert.ok(start !== -1, 'the Layers section has its "Known crossings" paragraph');
  const pairs = [...text.slice(start).matchAll(/^- `([^`]+)` -> `([^`]+)`/gm)];
  return new Set(pairs.map((p) => `${p[1]} -> ${p[2]}`));
}

const filesUnder = (dir: string): string[] => tsFilesUnder(root, dir);

/** Every module specifier a file names: imports, re-exports and `import()` with a literal. */
function specifiers(file: string, text = readFileSync(join(root, file), 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const e = node.moduleReference.expression;
      if (ts.isStringLiteral(e)) found.push(e.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg && ts.isStringLiteralLike(arg)) found.push(arg.text);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) found.push(arg.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Repo-relative path of a relative specifier, or null for a package or builtin. */
function target(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return relative(root, resolve(root, dirname(file), spec))
    .split(sep)
    .join('/');
}

function globMatch(pattern: string, name: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return re.test(name);
}

function classify(layers: Layer[]) {
  /** The layer and the folder (the unit inside which imports are free) of a repo-relative file. */
  return (path: string): { layer: Layer; folder: string } | null => {
    const byMember = (member: string) => layers.find((l) => l.members.includes(member));
    if (path.startsWith(PACKAGE)) {
      const layer = byMember(PACKAGE);
      return layer ? { layer, folder: PACKAGE } : null;
    }
    if (!path.startsWith('src/')) return null;
    const inSrc = path.slice('src/'.length);
    const parts = inSrc.split('/');
    const name = parts[parts.length - 1]!;
    const folder = parts.length > 1 ? `${parts[0]}/` : inSrc;
    const pattern = layers.find((l) => l.members.some((m) => m.includes('*') && globMatch(m, name)));
    const layer = (parts.length > 1 ? pattern : undefined) ?? byMember(folder);
    return layer ? { layer, folder } : null;
  };
}

const layers = layerTable();
const layerOf = classify(layers);
const base = (p: string) => p.replace(/^src\//, '');

test('every file under src/ and the buyer package has a row in the layer table', () => {
  const missing = [...filesUnder('src'), ...filesUnder(PACKAGE.slice(0, -1))].filter((f) => !layerOf(f));
  assert.deepEqual(missing, [], 'add these folders or files to the table in docs/architecture.md "Layers"');
});

test('imports under src/ follow the layer table of docs/architecture.md', () => {
  const known = knownCrossings();
  const offending: string[] = [];
  const seen = new Set<string>();
  for (const file of filesUnder('src')) {
    const from = layerOf(file);
    if (!from) continue;
    for (const spec of specifiers(file)) {
      const path = target(file, spec);
      if (path === null) continue;
      const to = layerOf(path);
      assert.ok(existsSync(join(root, path)), `${file} imports ${spec}, which does not exist`);
      if (!to) {
        offending.push(`${base(file)} -> ${path} (layer ${from.layer.rank} -> outside every layer)`);
        continue;
      }
      const sameFolder = from.folder === to.folder;
      const ok =
        to.layer.rank < from.layer.rank || (to.layer.rank === from.layer.rank && (sameFolder || from.layer.sideways));
      if (ok) continue;
      const pair = `${base(file)} -> ${base(path)}`;
      if (known.has(pair)) {
        seen.add(pair);
        continue;
      }
      offending.push(
        `${pair} (layer ${from.layer.rank} ${from.layer.name} -> layer ${to.layer.rank} ${to.layer.name})`,
      );
    }
  }
  assert.deepEqual(offending, [], `imports against the layer table:\n${offending.join('\n')}`);
  const stale = [...known].filter((k) => !seen.has(k));
  assert.deepEqual(stale, [], 'listed under "Known crossings" but no longer imported: remove them from the page');
});

test('the buyer package imports nothing outside itself', () => {
  const offending: string[] = [];
  for (const file of filesUnder(PACKAGE.slice(0, -1))) {
    for (const spec of specifiers(file)) {
      const path = target(file, spec);
      if (path !== null && !path.startsWith(PACKAGE)) offending.push(`${file} -> ${path}`);
    }
  }
  assert.deepEqual(offending, [], `the package must stand alone:\n${offending.join('\n')}`);
});

test('the layer check sees every kind of import and knows an edge inside a domain folder', () => {
  const text = [
    "import a from '../lib/a.ts';",
    "import type { B } from '../cities/b.ts';",
    "export { c } from './c.ts';",
    "export * from './d.ts';",
    "const e = await import('../ops/e.ts');",
    "type F = import('../poller/f.ts').F;",
    "// import g from '../admin/g.ts';",
    'const h = \'import x from "../admin/h.ts"\';',
  ].join('\n');
  assert.deepEqual(specifiers('src/payments/x.ts', text), [
    '../lib/a.ts',
    '../cities/b.ts',
    './c.ts',
    './d.ts',
    '../ops/e.ts',
    '../poller/f.ts',
  ]);
  assert.equal(layerOf('src/delivery/routes.ts')?.layer.rank, 4, "a domain folder's routes.ts is an edge");
  assert.equal(layerOf('src/paywall/paid-routes.ts')?.layer.rank, 4);
  assert.equal(layerOf('src/payments/plane.ts')?.layer.rank, 3);
  assert.equal(layerOf(`${PACKAGE}chain.ts`)?.layer.rank, 0);
});

// The payment domain answers outcomes; taking a request or building a Response is the paywall's
// (src/paywall/), so nothing under src/payments/ may import the HTTP framework.
test('nothing under src/payments/ imports hono', () => {
  const http = filesUnder('src/payments').filter((f) =>
    specifiers(f).some((s) => s === 'hono' || s.startsWith('hono/') || s.startsWith('@hono/')),
  );
  assert.deepEqual(http, [], 'move these to src/paywall/ (the payments HTTP edge)');
});
