import { createWalletClient, http, parseAbi, parseSignature, type Address, type Hex, type PublicClient } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { privateKeyToAccount } from 'viem/accounts';
import { authorizationTypedData, usdcDomain } from '../../src/x402/eip3009.ts';
import { chainFor } from '../../src/payments/settlers/chain-proof.ts';
import { DEPLOYER_KEY } from './evm.ts';

/**
 * Issue 35 item 1's attack: burn the binding nonce on chain without paying anyone, before the
 * X-Payment that carries it is sent. `cancel`: EIP-3009 cancelAuthorization. `self`: a value-0
 * transferWithAuthorization from the payer to itself with the same nonce (needs no balance).
 * Submitted by the deployer (any account can submit a signed authorization).
 */
export type SpendVariant = 'cancel' | 'self';

const ABI = parseAbi([
  'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
]);

export async function spendNonce(opts: {
  rpcUrl: string;
  pub: PublicClient;
  usdc: Address;
  payer: PrivateKeyAccount;
  nonce: Hex;
  variant: SpendVariant;
}): Promise<Hex> {
  const { usdc, payer, nonce } = opts;
  const wallet = createWalletClient({
    chain: chainFor(opts.rpcUrl),
    transport: http(opts.rpcUrl),
    account: privateKeyToAccount(DEPLOYER_KEY),
  });
  let hash: Hex;
  if (opts.variant === 'cancel') {
    const sig = await payer.signTypedData({
      domain: usdcDomain(usdc),
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce },
    });
    const { r, s, v } = parseSignature(sig);
    hash = await wallet.writeContract({
      address: usdc,
      abi: ABI,
      functionName: 'cancelAuthorization',
      args: [payer.address, nonce, Number(v), r, s],
    });
  } else {
    const auth = {
      from: payer.address,
      to: payer.address,
      value: 0n,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 600),
      nonce,
    };
    const { r, s, v } = parseSignature(await payer.signTypedData(authorizationTypedData(usdc, auth)));
    hash = await wallet.writeContract({
      address: usdc,
      abi: ABI,
      functionName: 'transferWithAuthorization',
      args: [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, Number(v), r, s],
    });
  }
  const receipt = await opts.pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`${opts.variant} of the nonce reverted`);
  return hash;
}
