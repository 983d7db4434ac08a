/**
 * A delivery worker in its own process, for the crash tests: it claims and sends the queued rows of
 * the database it is given, and the test SIGKILLs it mid-send. Modes:
 *   claim  the messenger announces `claimed` on stdout and never sends (killed between claim and send)
 *   send   the real Bot API adapter; the fake bot keeps the request open (killed after the platform got it)
 */
import { openDb } from '../../src/db/open.ts';
import { createBotMessenger, type Messenger } from '../../src/delivery/messenger.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { createDeliveryWorker } from '../../src/delivery/worker.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { emptyScreen } from './fixtures.ts';
import { createStores } from '../../src/stores.ts';

const [dbPath, mode, apiUrl, token] = process.argv.slice(2);
const db = openDb(dbPath!);
const stalled: Messenger = {
  configured: true,
  waitMs: () => 0,
  send: () => {
    process.stdout.write('claimed\n');
    return new Promise<void>(() => {});
  },
};
const messenger = mode === 'claim' ? stalled : createBotMessenger({ token, apiUrl: apiUrl!, timeoutMs: 60_000 });
const worker = createDeliveryWorker({
  outbox: createOutbox(db, { clock: systemClock, screen: emptyScreen(), reader: createStores(db).reader }),
  messenger,
  clock: systemClock,
  logger: createLogger({ level: 'error', write: (l) => process.stderr.write(l + '\n') }),
  termsUrl: 'https://isocast.example/terms.txt',
});
worker.start();
process.stdout.write('started\n');
setInterval(() => {}, 60_000);
