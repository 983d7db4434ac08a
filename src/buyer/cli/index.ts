import { readFlags, UsageError } from '../../lib/flags.ts';
import { buyCommand } from './buy.ts';
import { serverUrl } from './client.ts';
import { CliError, EXIT, type CliIo } from './output.ts';
import { readCommand } from './read.ts';
import { receiptCommand } from './receipts.ts';
import { stripControls } from '../../../packages/isocast-client/src/index.ts';
import { registerChatCommand } from './register-chat.ts';
import { COMMAND_USAGE, type CliCommand } from './help.ts';
import { citiesCommand, fetchCities } from './cities.ts';
import { nearest } from '../../lib/nearest.ts';
import { keygenCommand } from './key.ts';

const COMMANDS: Record<CliCommand, (argv: readonly string[], io: CliIo) => Promise<number>> = {
  buy: buyCommand,
  read: readCommand,
  receipt: receiptCommand,
  'register-chat': registerChatCommand,
  cities: citiesCommand,
  keygen: keygenCommand,
};

/** `unknown city: nyk` gains `; did you mean nyc?` when the server lists a close slug. */
async function withSuggestion(message: string, argv: readonly string[], envServer?: string): Promise<string> {
  const m = /^unknown city: (\S+)/.exec(message);
  if (!m) return message;
  try {
    const server = serverUrl(readFlags(argv, { strings: ['server'], booleans: ['insecure'] }), envServer);
    const slugs = (await fetchCities(server, 5_000, 'all')).map((c) => c.slug);
    const near = nearest(m[1]!, slugs);
    return near
      ? `${message}; did you mean ${near}? (isocast cities lists them)`
      : `${message}; isocast cities lists them`;
  } catch {
    return message;
  }
}

/** The buyer's commands, dispatched from main.ts. Returns the process exit code; never exits. */
export async function runCli(command: CliCommand, rawArgv: readonly string[], rawIo: CliIo): Promise<number> {
  // City slugs are lower case; `--city NYC` means nyc.
  const argv = rawArgv.map((a, i) => (rawArgv[i - 1] === '--city' || a.startsWith('--city=') ? a.toLowerCase() : a));
  // Belt and braces: whatever reaches the terminal has no control characters but line breaks.
  const clean = (line: string) => line.split('\n').map(stripControls).join('\n');
  const io: CliIo = { ...rawIo, stdout: (l) => rawIo.stdout(clean(l)), stderr: (l) => rawIo.stderr(clean(l)) };
  try {
    return await COMMANDS[command](argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      // One line saying what is wrong, then this command's usage (not the whole help).
      io.stderr(`isocast ${command}: ${err.message}\n${COMMAND_USAGE[command]}`);
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      io.stderr(`isocast ${command}: ${await withSuggestion(err.message, argv, io.envServer)}`);
      return err.exitCode;
    }
    io.stderr(`isocast ${command}: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT.failure;
  }
}
