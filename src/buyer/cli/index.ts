import { UsageError } from './args.ts';
import { buyCommand } from './buy.ts';
import { NetworkError } from './client.ts';
import { CliError, EXIT, type CliIo } from './output.ts';
import { readCommand } from './read.ts';
import { receiptCommand } from './receipt.ts';
import { stripControls } from '../sanitize.ts';
import { registerChatCommand } from './register-chat.ts';
import { CLI_HELP, type CliCommand } from './help.ts';

export type { CliCommand } from './help.ts';

/** The buyer's commands, dispatched from main.ts. Returns the process exit code; never exits. */
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
