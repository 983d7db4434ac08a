import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { createLogger } from './logger.ts';
import { recoverCheckedWasm, recoveryInput, secp256k1Module, type RecoveryInput } from './secp256k1.ts';

/**
 * Signature recovery off the event loop: one worker thread (more on bigger machines) running the
 * same WASM libsecp256k1 as src/lib/secp256k1.ts. A recovery is a third of a paid request's CPU
 * and the only part that needs nothing from the process's state, so on a machine with a spare
 * core the event loop can parse, bind, record and answer other requests meanwhile.
 *
 * The worker is built from a source string (`eval`) and receives the module the main thread
 * already compiled, so it needs no file on disk: it runs the same inside the single binary,
 * where the .wasm is a SEA asset. Requests are answered in order, so each worker is a FIFO of
 * promises. The wire is one 97-byte message (hash, r||s, recovery id) and a 64-byte answer
 * (empty when nothing recovers).
 *
 * Recovery stays inline (the result is identical, only the thread differs) when the machine has
 * one core, when the WASM did not load, when the worker cannot start, and for good after a worker
 * fails: whatever it held is recovered inline, so no request is lost to a thread.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { randomBytes } = require('node:crypto');
const wasm = new WebAssembly.Instance(workerData.module, {
  './rand.js': { generateInt32: () => randomBytes(4).readInt32BE(0) },
  './validate_error.js': { throwError: (code) => { throw new TypeError('secp256k1 error ' + code); } },
}).exports;
const NONE = new Uint8Array(0);
parentPort.on('message', (m) => {
  const h = new Uint8Array(wasm.memory.buffer, wasm.HASH_INPUT.value, 32);
  const s = new Uint8Array(wasm.memory.buffer, wasm.SIGNATURE_INPUT.value, 64);
  const p = new Uint8Array(wasm.memory.buffer, wasm.PUBLIC_KEY_INPUT.value, 65);
  let out = NONE;
  try {
    h.set(m.subarray(0, 32));
    s.set(m.subarray(32, 96));
    if (wasm.recover(65, m[96]) === 1) out = p.slice(1, 65);
  } catch {
    out = NONE;
  } finally {
    h.fill(0);
    s.fill(0);
    p.fill(0);
  }
  parentPort.postMessage(out);
});
`;

type Pending = { input: RecoveryInput; resolve(key: Uint8Array | null): void };
type Lane = { worker: Worker; queue: Pending[] };

export type RecoveryPool = {
  /** The 64-byte public key, null when nothing recovers, undefined when the WASM is unavailable. */
  recover(hash: Uint8Array, signature: Uint8Array): Promise<Uint8Array | null | undefined>;
  /** Worker threads in use now (0: inline). */
  threads(): number;
  close(): Promise<void>;
};

/**
 * Recoveries a thread may owe before the next one runs inline. Each waiting request holds one, so
 * a flood of paid requests (many connections, many addresses) could otherwise queue without
 * bound while the event loop kept accepting more; inline recovery blocks the loop as it did before
 * the pool, which is the backpressure a flood should meet. Far above a busy server's queue (about
 * the number of purchases in flight, concurrency 8 in the bench).
 */
export const MAX_OWED_PER_THREAD = 64;

/** Threads a machine with `cores` cores gives to recovery: the spare ones, at most two. */
export function recoveryThreads(cores: number): number {
  return Math.max(0, Math.min(2, cores - 1));
}

function warn(reason: unknown): void {
  createLogger({ level: 'warn', base: { service: 'isocast' } }).warn(
    'signature recovery worker unavailable; recovering on the main thread',
    { reason: reason instanceof Error ? reason.message : String(reason) },
  );
}

export function createRecoveryPool(
  opts: { threads?: number; workerSource?: string; maxOwedPerThread?: number } = {},
): RecoveryPool {
  const maxOwed = opts.maxOwedPerThread ?? MAX_OWED_PER_THREAD;
  const lanes: Lane[] = [];
  let next = 0;
  let failed = false;

  const inline = (input: RecoveryInput) => recoverCheckedWasm(input);

  function fail(lane: Lane, reason: unknown): void {
    // For good: a worker that died once would likely die again; inline is always correct.
    if (!failed) warn(reason);
    failed = true;
    const i = lanes.indexOf(lane);
    if (i >= 0) lanes.splice(i, 1);
    for (const p of lane.queue.splice(0)) p.resolve(inline(p.input) ?? null);
    lane.worker.terminate().catch(() => undefined);
  }

  function start(module: object): void {
    const wanted = opts.threads ?? recoveryThreads(availableParallelism());
    for (let i = 0; i < wanted; i++) {
      let worker: Worker;
      try {
        worker = new Worker(opts.workerSource ?? WORKER_SOURCE, { eval: true, workerData: { module } });
      } catch (err) {
        warn(err);
        failed = true;
        return;
      }
      const lane: Lane = { worker, queue: [] };
      worker.unref();
      worker.on('message', (key: Uint8Array) => {
        const p = lane.queue.shift();
        if (lane.queue.length === 0) worker.unref();
        p?.resolve(key.length === 64 ? key : null);
      });
      worker.on('error', (err) => fail(lane, err));
      worker.on('exit', (code) => fail(lane, `exited with code ${code}`));
      lanes.push(lane);
    }
  }

  let started = false;
  return {
    async recover(hash, signature) {
      if (!started) {
        started = true;
        const module = secp256k1Module();
        if (module) start(module);
      }
      if (!secp256k1Module()) return undefined;
      const input = recoveryInput(hash, signature);
      if (!input) return null;
      if (failed || lanes.length === 0) return inline(input);
      const lane = lanes[next++ % lanes.length]!;
      if (lane.queue.length >= maxOwed) return inline(input);
      const msg = new Uint8Array(97);
      msg.set(input.hash, 0);
      msg.set(input.sig64, 32);
      msg[96] = input.recoveryId;
      return new Promise((resolve) => {
        // Ref'd while it owes answers, so a process waiting only on a recovery does not exit.
        if (lane.queue.length === 0) lane.worker.ref();
        lane.queue.push({ input, resolve });
        lane.worker.postMessage(msg, [msg.buffer]);
      });
    },
    threads: () => (failed ? 0 : lanes.length),
    async close() {
      const all = lanes.splice(0);
      for (const lane of all) {
        lane.worker.removeAllListeners('exit');
        for (const p of lane.queue.splice(0)) p.resolve(inline(p.input) ?? null);
      }
      await Promise.all(all.map((l) => l.worker.terminate()));
    },
  };
}

let shared: RecoveryPool | null = null;

/** The process's pool, started on the first recovery (start-up never pays for the thread). */
export function recoveryPool(): RecoveryPool {
  shared ??= createRecoveryPool();
  return shared;
}
