/**
 * `npm test` after the type check: runs the suite with `node --test` and fails when the suite
 * changed a tracked file (issue 38 item 4). Tests write to temp dirs or test-artifacts/
 * (git-ignored); a test that rewrites a tracked file would otherwise show up only as a stray diff.
 *
 * Usage: node scripts/test.ts [node --test options, as --name=value] [test files or globs]
 *   With no file the whole suite runs (every test/ file ending .test.ts), two files at a time.
 *
 * Before the run it records each tracked file that differs from HEAD (`git status`) with a hash
 * of its content; after the run it does the same and names every tracked file whose state moved.
 * So a checkout with uncommitted edits passes as long as the suite leaves them as they were.
 * Outside a git checkout (or without git) the check is skipped with the reason, and the suite's
 * own exit code is kept. The suite's exit code is always kept when it failed.
 *
 * Node's compile cache is on for the run (NODE_COMPILE_CACHE, unless it is set already or
 * NODE_DISABLE_COMPILE_CACHE is): every test file and every `src/main.ts` child a test starts
 * would otherwise strip and compile the same TypeScript again, about half of a child's start-up
 * CPU. Node checks each entry against the file's content, so an edited file is compiled afresh.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SUITE = ['test/**/*.test.ts'];
const CONCURRENCY = '--test-concurrency=2';

/** Path of a tracked file that differs from HEAD -> its git status code and a hash of what is on disk. */
type Snapshot = Map<string, string>;

function git(args: string[], cwd: string): { ok: boolean; out: string; err: string } {
  // --no-optional-locks: reading the status must not take the index lock from a git command the
  // developer runs meanwhile.
  const r = spawnSync('git', ['--no-optional-locks', ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) return { ok: false, out: '', err: r.error.message };
  return { ok: r.status === 0, out: r.stdout, err: r.stderr.trim() };
}

function contentHash(path: string): string {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return `link:${readlinkSync(path)}`;
    if (!st.isFile()) return 'not-a-file';
    const mode = st.mode & 0o111 ? 'x' : '-';
    return `${mode}${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
  } catch {
    return 'missing';
  }
}

/** The top of the checkout, or why there is none. */
function checkoutRoot(cwd: string): { root: string } | { reason: string } {
  const r = git(['rev-parse', '--show-toplevel'], cwd);
  if (!r.ok) return { reason: r.err.split('\n')[0] || 'git rev-parse failed' };
  return { root: r.out.trim() };
}

function snapshot(root: string): Snapshot {
  const r = git(['status', '--porcelain=v1', '-z', '--untracked-files=no', '--ignore-submodules=none'], root);
  if (!r.ok) throw new Error(`git status failed: ${r.err}`);
  const out: Snapshot = new Map();
  const entries = r.out.split('\0');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.length < 4) continue;
    const code = entry.slice(0, 2);
    const path = entry.slice(3);
    out.set(path, `${code} ${contentHash(join(root, path))}`);
    // A staged rename or copy names its source next; it is a tracked path too.
    if (code[0] === 'R' || code[0] === 'C') {
      const from = entries[++i];
      if (from) out.set(from, `${code} from`);
    }
  }
  return out;
}

function changedBetween(before: Snapshot, after: Snapshot): string[] {
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths].filter((p) => before.get(p) !== after.get(p)).sort();
}

/** `node --test` with the options and files given, or the whole suite; the suite's exit code. */
function runSuite(args: string[], cwd: string): Promise<number> {
  const files = args.filter((a) => !a.startsWith('-'));
  const argv = ['--test', CONCURRENCY, ...args, ...(files.length > 0 ? [] : SUITE)];
  const env = { ...process.env };
  // Set when this script itself runs under a test runner: the suite below is a run of its own.
  delete env.NODE_TEST_CONTEXT;
  if (env.NODE_COMPILE_CACHE === undefined && env.NODE_DISABLE_COMPILE_CACHE === undefined)
    env.NODE_COMPILE_CACHE = join(tmpdir(), 'isocast-test-compile-cache');
  const child = spawn(process.execPath, argv, { cwd, stdio: 'inherit', env });
  // Ctrl-C reaches the suite through the terminal; this process waits for it to finish and then
  // still checks. A SIGTERM sent to this process alone is passed on.
  const onInt = () => {};
  const onTerm = () => child.kill('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return new Promise((resolve) => {
    child.on('error', (err) => {
      console.error(`could not start ${process.execPath}: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

async function main(): Promise<number> {
  const cwd = process.cwd();
  const where = checkoutRoot(cwd);
  if ('reason' in where) {
    console.log(`clean-checkout check skipped: not a git checkout (${where.reason})`);
    return runSuite(process.argv.slice(2), cwd);
  }
  const before = snapshot(where.root);
  const code = await runSuite(process.argv.slice(2), cwd);
  const changed = changedBetween(before, snapshot(where.root));
  if (changed.length === 0) return code;
  console.error(
    `\n${changed.length} tracked file(s) changed while the suite ran; tests must write to a temp dir or ` +
      `test-artifacts/ (git diff shows what changed):\n${changed.map((p) => `  ${p}`).join('\n')}`,
  );
  return code === 0 ? 1 : code;
}

process.exitCode = await main();
