import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { tsFilesUnder } from '../helpers/source-files.ts';

// The call-shape rule of docs/architecture.md ("Call shapes"): a function takes at most three
// positional parameters, past that one options object; and a bare `true`/`false` never rides
// in a call of ours with more than one argument, because `settle(id, r, payer, true)` cannot
// be read without opening the callee. A one-argument setter (`setUp(true)`) reads fine.

const root = join(import.meta.dirname, '..', '..');
const TREES = ['src', 'packages/isocast-client/src'];
const MAX_POSITIONAL = 3;

const filesUnder = (dir: string): string[] => tsFilesUnder(root, dir);

const sources = TREES.flatMap(filesUnder).map((file) =>
  ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true),
);

function where(source: ts.SourceFile, node: ts.Node): string {
  return `${source.fileName}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
}

function walk(files: ts.SourceFile[], visit: (node: ts.Node, source: ts.SourceFile) => void): void {
  for (const source of files) {
    const step = (node: ts.Node): void => {
      visit(node, source);
      ts.forEachChild(node, step);
    };
    step(source);
  }
}

function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '(anonymous)';
}

/** Functions (declarations, arrows, methods) with more than MAX_POSITIONAL parameters. */
function overlong(files: ts.SourceFile[]): string[] {
  const over: string[] = [];
  walk(files, (node, source) => {
    if (!ts.isFunctionLike(node) || ts.isFunctionTypeNode(node) || ts.isConstructorTypeNode(node)) return;
    const positional = node.parameters.filter((p) => p.name.getText() !== 'this').length;
    if (positional > MAX_POSITIONAL) over.push(`${where(source, node)} ${nameOf(node)} (${positional})`);
  });
  return over;
}

/** Calls of functions declared in `files` that pass a bare true/false beside other arguments. */
function bareFlags(files: ts.SourceFile[]): string[] {
  const ours = new Set<string>();
  walk(files, (node) => {
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isMethodSignature(node)) && node.name)
      ours.add(node.name.getText());
    if (ts.isPropertySignature(node) && node.type && ts.isFunctionTypeNode(node.type)) ours.add(node.name.getText());
    if (ts.isVariableDeclaration(node) && node.initializer && ts.isFunctionLike(node.initializer))
      ours.add(node.name.getText());
  });
  const flags: string[] = [];
  walk(files, (node, source) => {
    if (!ts.isCallExpression(node) || node.arguments.length < 2) return;
    const e = node.expression;
    const callee = ts.isPropertyAccessExpression(e) ? e.name.getText() : e.getText();
    const bare = node.arguments.some(
      (a) => a.kind === ts.SyntaxKind.TrueKeyword || a.kind === ts.SyntaxKind.FalseKeyword,
    );
    if (bare && ours.has(callee))
      flags.push(`${where(source, node)} ${node.getText().replace(/\s+/g, ' ').slice(0, 80)}`);
  });
  return flags;
}

test('no function under src/ or the buyer package takes more than three positional parameters', () => {
  assert.deepEqual(
    overlong(sources),
    [],
    'take one options object past three parameters (docs/architecture.md "Call shapes")',
  );
});

test('no call of our own functions passes a bare true/false beside other arguments', () => {
  assert.deepEqual(bareFlags(sources), [], 'name the flag in an options object (docs/architecture.md "Call shapes")');
});

test('the checks find what they are meant to find', () => {
  // A guard against checks that silently match nothing (a renamed tree, a parser change).
  assert.ok(sources.length > 200, `parsed ${sources.length} files`);
  const probe = ts.createSourceFile(
    'probe.ts',
    [
      'export function settle(id: number, r: object, payer: string, retry: boolean) {}',
      'const pick = (a: number, b: number, c: number) => a + b + c;',
      'function setUp(up: boolean) {}',
      'settle(1, {}, "0x", true);',
      'setUp(true);',
      'JSON.stringify({}, null, 2);',
      'new Map().set("k", false);',
    ].join('\n'),
    ts.ScriptTarget.Latest,
    true,
  );
  assert.deepEqual(overlong([probe]), ['probe.ts:1 settle (4)']);
  assert.deepEqual(bareFlags([probe]), ['probe.ts:4 settle(1, {}, "0x", true)']);
});
