import { Hono } from 'hono';
import { hashTypedData, recoverTypedDataAddress, type Hex } from 'viem';
import type { Catalog } from '../cities/catalog.ts';
import type { Db } from '../db/open.ts';
import { createSingleUse } from '../db/single-use.ts';
import type { Clock } from '../lib/clock.ts';
import {
  sanctioned,
  screeningUnavailable,
  requestInProgress,
  testMessageFailed,
  unknownCity,
} from '../lib/api-errors.ts';
import type { NodeBindings } from '../lib/edge.ts';
import type { AbuseLimits } from '../limits/limits.ts';
import { type AppEnv, type Ctx, readJsonObject, replyJson } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import { checkSignedRequest, SIGNED_REQUEST_SKEW_SEC } from '../lib/signed-request.ts';
import { type RouteDoc, routeDoc } from '../lib/route-doc.ts';
import { ErrorBody, RATE_LIMITED_DOC } from '../lib/schemas.ts';
import { registrationTestMessage } from './message.ts';
import { MessengerError, type Messenger } from './messenger.ts';
import type { WalletScreen } from './screen.ts';
import { MessengerDeliveryRequest, MessengerDeliveryResult, parseDeliveryBody } from './schemas.ts';
import { deliveryTypedData } from './typed-data.ts';

/** A registration answer should not hang on chat pacing; past this the test message fails fast. */
const TEST_MESSAGE_MAX_WAIT_MS = 5_000;

/** The accepted signed request a change consumes. */
type SignedUse = { wallet: string; digest: string; nowMs: number; expiresAtSec: number };

export function deliveryRoutes(deps: {
  db: Db;
  catalog: Catalog;
  clock: Clock;
  logger: Logger;
  messenger: Messenger;
  termsUrl: string;
  /** Sanctions: a listed wallet cannot register a chat (403); no list in force is 503. */
  screen: WalletScreen;
  limits: Pick<AbuseLimits, 'registration' | 'testMessage'>;
}): Hono<AppEnv> {
  const { db, catalog, clock, logger, messenger } = deps;
  // One registration per wallet. Every change consumes the signed request's digest in the same
  // transaction (db/single-use.ts), so a signed body changes state at most once even when two copies race.
  const getRow = db.prepare('SELECT chat_id AS chatId, city FROM delivery_registrations WHERE wallet = ?');
  const digests = createSingleUse<{ digest: string; wallet: string; used_at: number; expires_at: number }>(db, {
    table: 'delivery_signatures',
    key: ['digest'],
    columns: ['digest', 'wallet', 'used_at', 'expires_at'],
    agedBy: { column: 'expires_at', unit: 's' },
  });
  const upsert =
    db.prepare(`INSERT INTO delivery_registrations (wallet, chat_id, city, created_at, updated_at) VALUES (@wallet, @chatId, @city, @now, @now)
    ON CONFLICT (wallet) DO UPDATE SET chat_id = excluded.chat_id, city = excluded.city, updated_at = excluded.updated_at`);
  const del = db.prepare('DELETE FROM delivery_registrations WHERE wallet = ?');
  // Consuming first makes the digest check and the change one atomic step.
  const consumeDigest = (i: SignedUse): boolean =>
    digests.consume(
      { digest: i.digest, wallet: i.wallet, used_at: Math.floor(i.nowMs / 1000), expires_at: i.expiresAtSec },
      i.nowMs,
    );
  /** false if the digest was used meanwhile. */
  const setTx = db.transaction((i: SignedUse & { chatId: string; city: string | null }): boolean => {
    if (!consumeDigest(i)) return false;
    upsert.run({ wallet: i.wallet, chatId: i.chatId, city: i.city, now: i.nowMs });
    return true;
  });
  const removeTx = db.transaction((i: SignedUse) => {
    const row = getRow.get(i.wallet) as { chatId: string; city: string | null } | undefined;
    // Nothing to delete consumes nothing: the 404 changed no state.
    if (!row) return 'none';
    if (!consumeDigest(i)) return 'replayed';
    del.run(i.wallet);
    return row;
  });
  // Digests being processed right now: a copy arriving while the first awaits its test message
  // would otherwise send a second test message before either is stored.
  const inFlight = new Set<string>();
  const app = new Hono<AppEnv>();

  app.post('/v1/delivery/messenger', async (c) => {
    const body = parseDeliveryBody(await readJsonObject(c));
    const nowMs = clock.now();
    const wallet = body.wallet.toLowerCase();
    const signed = {
      wallet,
      chatId: body.chatId ?? '',
      citySlug: body.citySlug ?? '',
      action: body.action,
      timestamp: body.timestamp,
    };
    await checkSignedRequest({
      nowMs,
      timestamp: body.timestamp,
      // A malformed signature is simply not a match.
      verify: () =>
        recoverTypedDataAddress({ ...deliveryTypedData(signed), signature: body.signature as Hex }).then(
          (signer) => signer.toLowerCase() === wallet,
          () => false,
        ),
    });
    deps.limits.registration(wallet);
    // Spec 5 applied to the free push channel too: no chat set (not even a test message) for a listed
    // wallet or without a list. A delete stays open to everyone: it only stops pushes.
    if (body.action === 'set') {
      if (deps.screen.listed(wallet)) throw sanctioned('a sanctioned wallet cannot register a chat');
      if (!deps.screen.available()) throw screeningUnavailable();
    }
    const citySlug = signed.citySlug === '' ? null : signed.citySlug;
    const city = citySlug === null ? null : catalog.get(citySlug);
    if (city === undefined) throw unknownCity();

    // The EIP-712 digest: the identity of one signed request, accepted once.
    const digest = hashTypedData(deliveryTypedData(signed));
    // The last second this body passes the clock rule (lib/signed-request.ts): its record ages by it.
    const expiresAtSec = body.timestamp + SIGNED_REQUEST_SKEW_SEC;
    const done = (a: { chatId: string | null; city: string | null; idempotent: boolean }) =>
      replyJson(c as Ctx, {
        ok: true,
        wallet,
        chatId: a.chatId,
        citySlug: a.city,
        action: body.action,
        idempotent: a.idempotent,
      });
    const replayed = () => done({ chatId: body.chat, city: citySlug, idempotent: true });
    if (digests.has({ digest })) return replayed();
    if (inFlight.has(digest)) throw requestInProgress();
    inFlight.add(digest);
    try {
      if (body.action === 'delete') {
        const removed = removeTx.immediate({ wallet, digest, nowMs, expiresAtSec });
        // The spec's one 404 string (section 7: `unknown city`, also for nothing to delete); `reason` says which.
        if (removed === 'none') throw unknownCity('no delivery registration to delete');
        if (removed === 'replayed') return replayed();
        logger.info('delivery registration deleted', { wallet, city: removed.city });
        return done({ chatId: removed.chatId, city: removed.city, idempotent: false });
      }
      // Budgets, pacing and the store see only the canonical spelling.
      const chatId = body.chat!;
      deps.limits.testMessage(wallet, chatId, {
        peer: (c.env as NodeBindings | undefined)?.incoming?.socket?.remoteAddress,
        forwardedFor: () => c.req.header('x-forwarded-for') ?? null,
      });
      try {
        // Test messages ride the messenger's low lane: they never take a slot a paid push needs.
        await messenger.send(
          chatId,
          registrationTestMessage({ wallet, city: city?.displayName ?? null, termsUrl: deps.termsUrl }),
          { maxWaitMs: TEST_MESSAGE_MAX_WAIT_MS, lane: 'test' },
        );
      } catch (err) {
        const reason = err instanceof MessengerError ? err.message : 'messenger failed';
        logger.warn('delivery test message failed', {
          wallet,
          kind: err instanceof MessengerError ? err.kind : 'unknown',
          reason,
        });
        throw testMessageFailed(reason);
      }
      if (!setTx.immediate({ wallet, chatId, city: citySlug, digest, nowMs: clock.now(), expiresAtSec }))
        return replayed();
      logger.info('delivery registration set', { wallet, city: citySlug });
      return done({ chatId, city: citySlug, idempotent: false });
    } finally {
      inFlight.delete(digest);
    }
  });

  return app;
}

const failure = (description: string) => ({ description, schema: ErrorBody });

export const deliveryDocs: RouteDoc[] = [
  routeDoc('post /v1/delivery/messenger', 'delivery', {
    summary: 'Register, change or delete the chat that receives entitled signals',
    description:
      'Free and wallet-signed; never charges and never touches entitlements. The body is authorised by an EIP-712 ' +
      'signature (domain {name: "Isocast", version: "1", chainId: 8453}, primaryType MessengerDelivery, fields wallet: address, ' +
      'chatId: string, citySlug: string, action: string, timestamp: uint256; absent strings are signed as ""). ' +
      'On set a test message is sent first and nothing is stored if it fails. Each signed body is accepted once: ' +
      'sending it again changes nothing and answers idempotent: true.',
    body: MessengerDeliveryRequest,
    responses: {
      200: {
        description: 'Registration set or deleted (or this signed request was already applied)',
        schema: MessengerDeliveryResult,
      },
      400: failure('Invalid wallet, bad action, missing chatId on set, missing signature or timestamp'),
      401: failure('`stale timestamp` or `signature verification failed`'),
      429: {
        ...RATE_LIMITED_DOC,
        description:
          'too many registrations from this address or wallet, or test messages to this chat or from this wallet',
      },
      404: failure(
        '`unknown city`: the slug is unknown, or (delete) there is no registration, with `reason: "no delivery registration to delete"`',
      ),
      403: failure(
        '`wallet is sanctioned; payment refused` (set only), with `reason: "a sanctioned wallet cannot register a chat"`; no test message is sent',
      ),
      409: failure('The same signed request is being processed right now'),
      502: failure('`test message failed` (chat unreachable or bot not configured), with `reason`'),
      503: failure('`sanctions screening unavailable` (set only): fail-closed, nothing stored'),
    },
  }),
];
