import { UsageError } from './args.ts';
import { buyCommand } from './buy.ts';
import { NetworkError } from './client.ts';
import { CliError, EXIT, type CliIo } from './output.ts';
import { readCommand } from './read.ts';
import { registerChatCommand } from './register-chat.ts';

/** The buyer's commands, dispatched from main.ts. Returns the process exit code; never exits. */
export const CLI_COMMANDS = ['buy', 'read', 'register-chat'] as const;
export type CliCommand = (typeof CLI_COMMANDS)[number];

export const CLI_HELP = `Buyer commands (all take --server <url>, default http://localhost:8402, and --json):
  buy --city <slug> --count <n>            pay for a bundle of n signals (key: --key-file <file> or ISOCAST_KEY);
                                           the receipt goes to --receipts <file> [./.isocast/receipts.json], mode 0600
  read --city <slug> [--since N] [--follow] [--interval S]
                                           print entitled signals; --follow keeps polling every S seconds [30]
  register-chat --chat <id> [--city <slug>] | --delete
                                           have entitled signals pushed to a chat (wallet-signed, free)
Exit codes: 0 done, 1 failure, 2 usage, 3 payment needed (bundle used up, or no receipt yet).
`;

export function isCliCommand(name: string): name is CliCommand {
  return (CLI_COMMANDS as readonly string[]).includes(name);
}

export async function runCli(command: CliCommand, argv: readonly string[], io: CliIo): Promise<number> {
  try {
    switch (command) {
      case 'buy': return await buyCommand(argv, io);
      case 'read': return await readCommand(argv, io);
      case 'register-chat': return await registerChatCommand(argv, io);
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
