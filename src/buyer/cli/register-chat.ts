import { type DeliveryAction, deliveryTypedData } from '../../delivery/typed-data.ts';
import { parseFlags, serverUrl, UsageError } from './args.ts';
import { DEFAULT_SERVER } from './buy.ts';
import { createClient, serverError } from './client.ts';
import { loadAccount } from './key.ts';
import { CliError, EXIT, withoutDisclaimer, type CliIo } from './output.ts';

/**
 * `isocast register-chat --chat <id> [--city <slug>]` and `--delete`: signs the EIP-712
 * MessengerDelivery message with the wallet key and posts it. Free; never charges. The server
 * sends a test message to the chat before it stores anything.
 */
const REGISTER_FLAGS = {
  strings: ['chat', 'city', 'server', 'key-file', 'timeout'],
  booleans: ['delete', 'json', 'insecure'],
} as const;

export async function registerChatCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const flags = parseFlags(argv, REGISTER_FLAGS);
  const action: DeliveryAction = flags.on.has('delete') ? 'delete' : 'set';
  const chatId = flags.values.chat ?? '';
  if (action === 'set' && chatId === '')
    throw new UsageError('--chat <id> is required (or --delete to remove the registration)');
  const citySlug = flags.values.city ?? '';
  const server = serverUrl(flags, DEFAULT_SERVER, io.envServer);
  const json = flags.on.has('json');
  const { account, warning } = loadAccount({ keyFile: flags.values['key-file'], envKey: io.envKey });
  if (warning) io.stderr(`warning: ${warning}`);
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
  const a = await createClient(server, (Number.isFinite(timeout) && timeout > 0 ? timeout : 15) * 1000).request(
    'POST',
    '/v1/delivery/messenger',
    { body },
  );

  if (a.status !== 200) {
    switch (a.status) {
      case 400:
        throw new CliError(`the server refused the request: ${serverError(a)}`, EXIT.usage);
      case 401:
        throw new CliError(
          `${serverError(a)}${/stale/.test(serverError(a)) ? ": check this machine's clock (600 s tolerance)" : ''}`,
        );
      case 404:
        if (action === 'delete')
          throw new CliError(
            citySlug
              ? `nothing to delete: ${serverError(a)}`
              : `nothing to delete: wallet ${account.address} has no chat registered at ${server}`,
          );
        throw new CliError(`unknown city: ${citySlug}`, EXIT.usage);
      case 502:
        throw new CliError(`the test message to chat ${chatId} failed, nothing was stored: ${serverError(a)}`);
      default:
        throw new CliError(`registration failed with HTTP ${a.status}: ${serverError(a)}`);
    }
  }
  const r = a.body;
  if (json) io.stdout(JSON.stringify(withoutDisclaimer(r)));
  else if (action === 'set')
    io.stdout(
      `chat ${r.chatId} now receives ${r.citySlug ?? 'all'} signals entitled to ${r.wallet}${r.idempotent ? ' (already registered)' : ''}`,
    );
  else io.stdout(`delivery registration of ${r.wallet} removed${r.chatId ? ` (was chat ${r.chatId})` : ''}`);
  return EXIT.ok;
}
