import type { SanctionsList } from '../sanctions/list.ts';

/**
 * The sanctions screen delivery applies to a wallet: at registration (403 / 503), when a signal
 * queues its pushes, and again just before each send. The list itself is reloaded in place
 * (SIGHUP or a file change), so every check reads the list in force at that instant.
 */
export type WalletScreen = {
  /** True when the wallet is on the list. */
  listed(wallet: string): boolean;
  /** False when screening is required but no list could be loaded: fail closed. */
  available(): boolean;
};

export function sanctionsScreen(list: SanctionsList, o: { required: boolean }): WalletScreen {
  return { listed: (wallet) => list.has(wallet), available: () => list.available({ required: o.required }) };
}

/** The reason an outbox row carries when its wallet was listed when the signal came or at send time. */
export const SANCTIONED_NOT_PUSHED = 'wallet is sanctioned; not pushed';
