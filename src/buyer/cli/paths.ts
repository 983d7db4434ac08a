import type { Flags } from './args.ts';
import type { CliIo } from './output.ts';
import { defaultReceiptsFile, stateHome } from './receipts.ts';

/** `--receipts FILE`, else receipts.json in isocast/ under the state directory main.ts resolved. */
export function receiptsFileFor(flags: Flags, io: CliIo): string {
  return flags.values.receipts ?? defaultReceiptsFile(io.stateHome ?? stateHome(process.env));
}
