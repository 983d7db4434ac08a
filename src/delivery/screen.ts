import type { SanctionsList } from '../sanctions/list.ts';

/**
 * The sanctions screen delivery applies to a wallet: at registration (403 / 503), when a signal
 * queues its pushes, and again just before each send. The list itself is reloaded in place
 * (SIGHUP or a file change), so every check reads the list in force at that instant.
 */
export type WalletScreen = ReturnType<typeof sanctionsScreen>;

/** `available()` is false when screening is required but no list could be loaded: fail closed. */
export function sanctionsScreen(list: SanctionsList, o: { required: boolean }) {
  return {
    listed: (wallet: string): boolean => list.has(wallet),
    available: (): boolean => list.available({ required: o.required }),
  };
}

/** The reason an outbox row carries when its wallet was listed when the signal came or at send time. */
export const SANCTIONED_NOT_PUSHED = 'wallet is sanctioned; not pushed';
