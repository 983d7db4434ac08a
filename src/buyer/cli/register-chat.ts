import { type DeliveryAction, deliveryTypedData } from '../../delivery/typed-data.ts';
import { parseFlags, UsageError } from '../../lib/flags.ts';
import { serverErrorText } from '../../../packages/isocast-client/src/index.ts';
import { createClient, refusal, serverFlags, serverUrl } from './client.ts';
import { loadAccount } from './key.ts';
import { EXIT, withoutDisclaimer, type CliIo } from './output.ts';

/** `isocast register-chat --chat <id> [--city <slug>]` and `--delete`: a wallet-signed MessengerDelivery, free. */
const REGISTER_FLAGS = serverFlags(['chat', 'city', 'key-file'], ['delete']);

export async function registerChatCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, REGISTER_FLAGS);
  const action: DeliveryAction = flags.on.has('delete') ? 'delete' : 'set';
  const chatId = flags.values.chat ?? '';
  if (action === 'set' && chatId === '')
    throw new UsageError('--chat <id> is required (or --delete to remove the registration)');
  const citySlug = flags.values.city ?? '';
  const server = serverUrl(flags, io.envServer);
  const json = flags.on.has('json');
  const account = loadAccount(flags, io);
  const timestamp = Math.floor((io.nowMs?.() ?? Date.now()) / 1000);
  const signature = await account.signTypedData(
    deliveryTypedData({ wallet: account.address, chatId, citySlug, action, timestamp }),
  );
  const body = {
    wallet: account.address,
    action,
    signature,
    timestamp,
    ...(chatId ? { chatId } : {}),
    ...(citySlug ? { citySlug } : {}),
  };
  const timeout = Number(flags.values.timeout ?? 15);
  const timeoutMs = (Number.isFinite(timeout) && timeout > 0 ? timeout : 15) * 1000;
  const a = await createClient(server, timeoutMs).request('POST', '/v1/delivery/messenger', { body });

  const e = serverErrorText(a.status, a.body);
  const nothing = citySlug ? e : `wallet ${account.address} has no chat registered at ${server}`;
  if (a.status !== 200)
    throw refusal(
      a,
      {
        400: [`the server refused the request: ${e}`, EXIT.usage],
        401: `${e}${/stale/.test(e) ? ": check this machine's clock (600 s tolerance)" : ''}`,
        404: action === 'delete' ? `nothing to delete: ${nothing}` : [`unknown city: ${citySlug}`, EXIT.usage],
        502: `the test message to chat ${chatId} failed, nothing was stored: ${e}`,
      },
      `registration failed with HTTP ${a.status}: ${e}`,
    );
  const r = a.body;
  if (json) io.stdout(JSON.stringify(withoutDisclaimer(r)));
  else if (action === 'set')
    io.stdout(
      `chat ${r.chatId} now receives ${r.citySlug ?? 'all'} signals entitled to ${r.wallet}${r.idempotent ? ' (already registered)' : ''}`,
    );
  else io.stdout(`delivery registration of ${r.wallet} removed${r.chatId ? ` (was chat ${r.chatId})` : ''}`);
  return EXIT.ok;
}
