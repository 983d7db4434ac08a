import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** The `### \`name/\`` headings of the "Folders" section, in order. */
function documentedFolders(markdown: string): string[] {
  const start = markdown.indexOf('\n## Folders\n');
  assert.ok(start !== -1, 'docs/architecture.md has a "## Folders" section');
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^### `([^`]+)\/`$/gm)].map((m) => m[1]!);
}

test('docs/architecture.md names exactly the folders under src/, alphabetically', () => {
  const documented = documentedFolders(readFileSync(join(root, 'docs', 'architecture.md'), 'utf8'));
  const onDisk = readdirSync(join(root, 'src'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  assert.deepEqual([...documented].sort(), onDisk, 'a folder was added, moved or removed: update docs/architecture.md');
  assert.deepEqual(documented, [...documented].sort(), 'keep the folder paragraphs in alphabetical order');
});

test('every module the tables section names exists', () => {
  const markdown = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  const start = markdown.indexOf('\n## Tables');
  const section = markdown.slice(start, markdown.indexOf('\n## ', start + 1));
  const modules = [...section.matchAll(/`([a-z-]+\/[a-z0-9/-]+\.ts)`/g)].map((m) => m[1]!);
  assert.ok(modules.length > 10);
  for (const m of new Set(modules))
    assert.doesNotThrow(() => readFileSync(join(root, 'src', m)), `src/${m} is named in "Tables" but does not exist`);
});
