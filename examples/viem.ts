import { encodePacked, keccak256 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const base = process.env.ISOCAST_SERVER ?? 'http://localhost:8402';
const city = process.env.CITY ?? 'nyc';
const count = 20;
const account = privateKeyToAccount(process.env.ISOCAST_KEY as `0x${string}`); // isocast keygen makes a test key
const url = `${base}/v1/subscribe?city=${city}&count=${count}`;
const a = (await (await fetch(url, { method: 'POST' })).json()).accepts[0];
const nonce = keccak256(
  encodePacked(
    ['address', 'string', 'uint256', 'bytes32'],
    [account.address, city, BigInt(count), a.extra.binding.salt],
  ),
);
const auth = {
  from: account.address,
  to: a.payTo,
  value: BigInt(a.maxAmountRequired),
  validAfter: 0n,
  validBefore: BigInt(Math.floor(Date.now() / 1000) + a.maxTimeoutSeconds),
  nonce,
};
const signature = await account.signTypedData({
  domain: { name: a.extra.name, version: a.extra.version, chainId: 8453, verifyingContract: a.asset },
  types: {
    TransferWithAuthorization: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' },
      { name: 'validBefore', type: 'uint256' },
      { name: 'nonce', type: 'bytes32' },
    ],
  },
  primaryType: 'TransferWithAuthorization',
  message: auth,
});
const payload = {
  x402Version: 1,
  scheme: 'exact',
  network: 'eip155:8453',
  payload: {
    signature,
    authorization: Object.fromEntries(Object.entries(auth).map(([k, v]) => [k, String(v)])),
    ...(a.extra.binding.saltEcho ? { salt: a.extra.binding.salt } : {}),
  },
};
const paid = await fetch(url, { method: 'POST', headers: { 'X-Payment': btoa(JSON.stringify(payload)) } });
const bought = await paid.json();
console.log(
  `HTTP ${paid.status}: bought ${bought.count} ${city} signals, entitled through seq ${bought.paidThroughSeq}`,
);
const page = await (
  await fetch(`${base}/v1/signals?city=${city}&since=0`, {
    headers: { Authorization: `Bearer ${bought.receiptToken}` },
  })
).json();
for (const s of page.signals) console.log(`#${s.seq} ${s.city} ${s.old.bucket} -> ${s.new.bucket} at ${s.observedAt}`);
console.log(`${page.signals.length} signal(s); latest seq ${page.latest}`);
