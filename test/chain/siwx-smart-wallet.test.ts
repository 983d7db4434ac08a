import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createSIWxMessage, encodeSIWxHeader, type SIWxPayload } from '@x402/extensions/sign-in-with-x';
import { compileContract, DEPLOYER_KEY, startLocalChain } from './evm.ts';
import { chainFor } from '../../src/payments/settlers/chain-proof.ts';
import { chainVerifierFromConfig } from '../../src/payments/settlers/from-config.ts';
import { createSiwxSignIn } from '../../src/payments/siwx.ts';
import type { Config } from '../../src/config.ts';
import { openDb } from '../../src/db/open.ts';
import { manualClock } from '../helpers/clock.ts';
import { ApiError } from '../../src/lib/errors.ts';
import { loadSanctionsList } from '../../src/sanctions/list.ts';
import { tempDir } from '../helpers/app.ts';

/**
 * A smart wallet signs in (ERC-1271): a contract wallet deployed on the local EVM (chain id 8453),
 * whose owner EOA signs the SIWE message; the signature does not recover to the wallet's address,
 * so it is checked through the chain client live mode builds from RPC_URL
 * (chainVerifierFromConfig: viem's verifyMessage, which calls the wallet's isValidSignature).
 */
test('an ERC-1271 smart wallet signs in through the RPC_URL chain client; a stranger signing for it is refused', async (t) => {
  const chain = await startLocalChain();
  t.after(() => chain.close());
  const viemChain = chainFor(chain.rpcUrl);
  const pub = createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl) });
  const deployer = createWalletClient({
    chain: viemChain,
    transport: http(chain.rpcUrl),
    account: privateKeyToAccount(DEPLOYER_KEY),
  });
  const owner = privateKeyToAccount(`0x${'4d'.repeat(32)}`);
  const stranger = privateKeyToAccount(`0x${'4e'.repeat(32)}`);
  const { abi, bytecode } = compileContract('TestSmartWallet');
  const tx = await deployer.deployContract({ abi, bytecode, args: [owner.address] });
  const wallet = (await pub.waitForTransactionReceipt({ hash: tx })).contractAddress as Address;

  const base = 'https://isocast.example';
  const now = Date.parse('2026-07-15T15:00:00Z');
  const db = openDb(join(tempDir(t), 'isocast.db'));
  t.after(() => db.close());
  const verifier = chainVerifierFromConfig({ PAYMENT_MODE: 'live', RPC_URL: chain.rpcUrl } as Config)!;
  const signIn = createSiwxSignIn({
    db,
    clock: manualClock(now),
    baseUrl: base,
    sanctions: loadSanctionsList({}),
    verifyMessage: verifier.verifyMessage!.bind(verifier),
  });
  const header = async (signer: typeof owner, nonce: string) => {
    const info = {
      domain: 'isocast.example',
      uri: `${base}/v1/signals?city=nyc`,
      version: '1',
      chainId: 'eip155:8453',
      type: 'eip191' as const,
      nonce,
      issuedAt: new Date(now).toISOString(),
      expirationTime: new Date(now + 300_000).toISOString(),
    };
    const signature = await signer.signMessage({ message: createSIWxMessage(info, wallet) });
    const payload: SIWxPayload = { ...info, address: wallet, signature };
    return encodeSIWxHeader(payload);
  };

  assert.equal(await signIn(await header(owner, 'smartwallet0001')), wallet.toLowerCase());
  await assert.rejects(signIn(await header(stranger, 'smartwallet0002')), (err) => {
    assert.ok(err instanceof ApiError);
    assert.deepEqual([err.status, err.message], [401, 'sign-in-with-x signature verification failed']);
    return true;
  });
});
