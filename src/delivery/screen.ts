import type { SanctionsList } from '../sanctions/list.ts';

/** Asked at registration, enqueue and just before each send, of the list in force then (it reloads in place). */
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
