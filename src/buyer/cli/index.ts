import { UsageError } from './args.ts';
import { buyCommand } from './buy.ts';
import { NetworkError } from './client.ts';
import { CliError, EXIT, type CliIo } from './output.ts';
import { readCommand } from './read.ts';
import { receiptCommand } from './receipt.ts';
import { stripControls } from '../sanitize.ts';
import { registerChatCommand } from './register-chat.ts';

/** The buyer's commands, dispatched from main.ts. Returns the process exit code; never exits. */
export const CLI_COMMANDS = ['buy', 'read', 'receipt', 'register-chat'] as const;
export type CliCommand = (typeof CLI_COMMANDS)[number];

export const CLI_HELP = `Buyer commands (all take --server <url>, default http://localhost:8402, and --json;
plain http is refused for any host but this machine unless --insecure):
  buy --city <slug> --count <n> [--max-usd N] [--yes]
                                           pay for a bundle of n signals (key: --key-file <file> or ISOCAST_KEY).
                                           Checks the 402 first (exact tier price, USDC on Base, the published
                                           payTo; --max-usd caps it) and asks before paying when run in a terminal
  read --city <slug> [--since N] [--follow] [--interval S]
                                           print entitled signals; --follow keeps polling every S seconds [30]
  receipt                                  recover this wallet's receipt token with a signature (free)
  register-chat --chat <id> [--city <slug>] | --delete
                                           have entitled signals pushed to a chat (wallet-signed, free)
Receipts: --receipts <file> [$XDG_STATE_HOME/isocast/receipts.json, default ~/.local/state/isocast/], mode 0600.
Exit codes: 0 done, 1 failure (also: a challenge refused, nothing signed), 2 usage, 3 payment needed.
`;

export function isCliCommand(name: string): name is CliCommand {
  return (CLI_COMMANDS as readonly string[]).includes(name);
}

export async function runCli(command: CliCommand, argv: readonly string[], rawIo: CliIo): Promise<number> {
  // Belt and braces: whatever reaches the terminal has no control characters but line breaks.
  const clean = (line: string) => line.split('\n').map(stripControls).join('\n');
  const io: CliIo = { ...rawIo, stdout: (l) => rawIo.stdout(clean(l)), stderr: (l) => rawIo.stderr(clean(l)) };
  try {
    switch (command) {
      case 'buy':
        return await buyCommand(argv, io);
      case 'read':
        return await readCommand(argv, io);
      case 'receipt':
        return await receiptCommand(argv, io);
      case 'register-chat':
        return await registerChatCommand(argv, io);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`isocast ${command}: ${err.message}\n\n${CLI_HELP}`);
      return EXIT.usage;
    }
    if (err instanceof CliError || err instanceof NetworkError) {
      io.stderr(`isocast ${command}: ${err.message}`);
      return err instanceof CliError ? err.exitCode : EXIT.failure;
    }
    io.stderr(`isocast ${command}: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT.failure;
  }
}
