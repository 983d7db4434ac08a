import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSanctionsList } from '../../src/sanctions/list.ts';
import { tempDir } from '../helpers/app.ts';

const A = '0x' + 'a1'.repeat(20);
const B = '0x' + 'B2'.repeat(20);
const C = '0x' + 'c3'.repeat(20);

/** The addresses a list file of `text` screens, of A, B and C, and how many it holds. */
function screened(t: Parameters<typeof tempDir>[0], text: string) {
  const path = join(tempDir(t), 'ofac.txt');
  writeFileSync(path, text);
  const list = loadSanctionsList({ path });
  return { has: [A, B, C].filter((a) => list.has(a)), count: list.status().count };
}

test('plain list: one address per line, comments and blanks ignored, case folded', (t) => {
  assert.deepEqual(screened(t, `# list\n${A}\n\n  ${B}  # note\n`), { has: [A, B], count: 2 });
});

test('SDN XML: only Digital Currency Address - ETH entries count', (t) => {
  const xml = `<?xml version="1.0"?><sdnList><sdnEntry><idList>
    <id><uid>1</uid><idType>Digital Currency Address - ETH</idType><idNumber>${A}</idNumber></id>
    <id><uid>2</uid><idType>Digital Currency Address - XBT</idType><idNumber>1BoatSLRHtKNngkdXEeobR76b53LETtpyT</idNumber></id>
    <id><uid>3</uid><idType>Passport</idType><idNumber>${C}</idNumber></id>
  </idList></sdnEntry></sdnList>`;
  assert.deepEqual(screened(t, xml), { has: [A], count: 1 });
  const advanced = `<Sanctions><Feature ID="9" FeatureTypeID="345"><FeatureVersion><Comment/>
    <VersionDetail DetailTypeID="1432">${B}</VersionDetail></FeatureVersion><!-- Digital Currency Address - ETH --></Feature></Sanctions>`;
  assert.deepEqual(screened(t, advanced), { has: [B], count: 1 });
});

test('loader reports status for /health and screens case-insensitively', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'ofac.txt');
  writeFileSync(path, `${A}\n${B}\n`);
  const list = loadSanctionsList({ path, extra: `${C}, not-an-address` });
  assert.deepEqual(
    { ...list.status(), ageSeconds: 0 },
    { listLoaded: true, extraConfigured: true, count: 3, ageSeconds: 0 },
  );
  assert.ok(list.status().ageSeconds! <= 5);
  assert.ok(list.has(A.toUpperCase().replace('0X', '0x')));
  assert.ok(list.has(C));
  assert.ok(!list.has('0x' + '00'.repeat(20)));
  assert.ok(list.available({ required: true }));
});

test('a missing list file is reported, and screening is unavailable only when required', () => {
  const list = loadSanctionsList({ path: '/nonexistent/ofac.txt' });
  assert.deepEqual(list.status(), { listLoaded: false, extraConfigured: false, count: 0, ageSeconds: null });
  assert.match(list.loadError ?? '', /cannot read sanctions list/);
  assert.equal(list.available({ required: true }), false);
  assert.equal(list.available({ required: false }), true);
});
