/**
 * What the free identifier `performance` means inside the binary's main bundle (esbuild `inject`):
 * `now()` alone, milliseconds on the same monotonic clock as Node's own (uv_hrtime), counted from
 * this module's evaluation. The global's first touch loads node:perf_hooks and what it imports,
 * which was 1.8 % of a start's busy samples inside its first request, and the hello-world floor
 * loads none of it. Every use in the bundle is `performance.now()` differences (limits, latency,
 * deadlines); scripts/build-binary.ts refuses a bundle that asks `performance` for anything else.
 */
const origin = process.hrtime.bigint();

export const performance = {
  now: () => Number(process.hrtime.bigint() - origin) / 1e6,
};
