/**
 * Loads node:crypto, node:worker_threads, node:child_process and node:readline (and the modules of
 * the list below) on first use inside the binary, not while the bundle is evaluated. None is in Node's own start-up snapshot:
 * evaluating them cost the binary's start about 3.5, 0.7, 0.9 and 1 ms, before the first answer,
 * which needs none of them (docs/performance.md, start-up). A `serve` loads crypto at its first
 * paid request or poller tick, worker_threads when the checkpoint thread starts, a second in, and
 * child_process and readline only with a replica (the Litestream supervisor) or a restore.
 * node:https (which loads node:tls and node:crypto with it) and node:zlib are src/lib/http-client.ts's,
 * imported at start by the messenger and the sources but called only by an outbound request: they
 * were about 7 % of a profiled start and -10 ms of CPU by the first 200 (docs/performance.md, issue
 * 39 third pass). node:os, node:timers/promises and node:module follow for the same reason.
 *
 * The project's imports of these modules resolve to a generated module with one forwarding
 * function per function the real module exports; the first call loads the real module. Only
 * functions are forwarded, so importing a constant (`constants`, `webcrypto`) fails the build,
 * and so does `instanceof` on an imported class (the forwarder is not the class): both are
 * looked at again rather than made lazy blindly. `new` on a forwarder constructs the real class.
 * Imports from packages are left alone, except @noble/hashes' `crypto` module, which reads
 * node:crypto while it is evaluated: it resolves to scripts/sea/noble-crypto.mjs instead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type EsbuildPlugin = NonNullable<import('tsup').Options['esbuildPlugins']>[number];

export const LAZY_BUILTINS: readonly string[] = [
  'node:crypto',
  'node:worker_threads',
  'node:child_process',
  'node:readline',
  'node:https',
  'node:zlib',
  'node:os',
  'node:tty',
  'node:timers/promises',
  'node:module',
];

const NAMESPACE = 'isocast-lazy-builtin';
const NOBLE_CRYPTO = join(import.meta.dirname, 'noble-crypto.mjs');

/** The module text standing in for `id`: every exported function, forwarded on first call. */
export function lazyBuiltinSource(id: string): string {
  const real = process.getBuiltinModule(id) as Record<string, unknown>;
  const names = Object.keys(real).filter((k) => typeof real[k] === 'function' && /^[A-Za-z_$][\w$]*$/.test(k));
  const lines = [`let m;`, `const load = () => (m ??= process.getBuiltinModule(${JSON.stringify(id)}));`];
  for (const n of names) {
    lines.push(
      `export function ${n}(...a) { return new.target ? Reflect.construct(load().${n}, a) : load().${n}(...a); }`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Identifiers `text` uses with `instanceof` that are among `names`. */
export function instanceofUses(text: string, names: ReadonlySet<string>): string[] {
  return [...text.matchAll(/\binstanceof\s+([A-Za-z_$][\w$]*)/g)].map((m) => m[1] ?? '').filter((n) => names.has(n));
}

export const lazyBuiltins: EsbuildPlugin = {
  name: 'isocast-lazy-builtins',
  setup(b) {
    const filter = new RegExp(`^(${LAZY_BUILTINS.map((id) => id.replace(/^node:/, '')).join('|')})$`);
    b.onResolve({ filter: /^node:/ }, (args) => {
      const bare = args.path.slice('node:'.length);
      if (!filter.test(bare) || /[\\/]node_modules[\\/]/.test(args.importer)) return undefined;
      const real = process.getBuiltinModule(args.path) as Record<string, unknown>;
      const fns = new Set(Object.keys(real).filter((k) => typeof real[k] === 'function'));
      const bad = instanceofUses(readFileSync(args.importer, 'utf8'), fns);
      if (bad.length > 0)
        return {
          errors: [
            { text: `${args.importer} uses instanceof ${bad.join(', ')} from ${args.path}, which loads lazily` },
          ],
        };
      return { path: args.path, namespace: NAMESPACE };
    });
    b.onResolve({ filter: /^@noble\/hashes\/crypto(\.js)?$/ }, () => ({ path: NOBLE_CRYPTO }));
    b.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
      contents: lazyBuiltinSource(args.path),
      loader: 'js',
    }));
  },
};
