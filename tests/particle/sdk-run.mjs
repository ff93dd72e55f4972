// Runs Particle's published Universal Account SDK (@particle-network/universal-account-sdk
// 2.0.3, installed by tests/particle/install.sh) against a devnet: a `UniversalAccount` pointed
// at devnet's Particle JSON-RPC through the SDK's own `rpcUrl` option, owned by a local key.
//
//   node tests/particle/sdk-run.mjs < config.json
//
// config.json (stdin, so the key stays out of the process list):
//   {"rpcUrl": "http://127.0.0.1:PORT/particle", "projectId": "…", "projectClientKey": "…",
//    "ownerKey": "0x<32-byte secp256k1 key>",
//    "transfer": {"chainId": 8453, "address": "<token contract>", "amount": "5", "receiver": "0x…"},
//    "universal": {"chainId": 42161, "type": "usdc", "address": "<token contract>",
//                  "decimals": 6, "amount": "3", "receiver": "0x…"},
//    "tokenTransactions": {"chainId": 8453, "address": "<token contract>"}}
//
// It calls getSmartAccountOptions, getPrimaryAssets, createTransferTransaction (signs the root
// hash with the key: EIP-191 over its 32 bytes, as Particle's examples do; sendTransaction;
// getTransaction), createUniversalTransaction (an ERC-20 transfer; the same), getTransactions,
// getTokenTransactions and getPrimaryAssets again, and prints one JSON line: every call with its
// result or error, and the owner's addresses, balances and transactions as the SDK sees them.
// Exits 0 when every call succeeded, 1 otherwise.

import { UniversalAccount } from "@particle-network/universal-account-sdk";
import { encodeFunctionData, erc20Abi, parseUnits } from "viem";
import { privateKeyToAccount } from "viem/accounts";

const input = await new Promise((resolve, reject) => {
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
  process.stdin.on("error", reject);
});
const config = JSON.parse(input);
const owner = privateKeyToAccount(config.ownerKey);

const ua = new UniversalAccount({
  projectId: config.projectId,
  projectClientKey: config.projectClientKey,
  projectAppUuid: config.projectAppUuid ?? "depositkit-devnet-app",
  smartAccountOptions: { name: "UNIVERSAL", version: "2.0.1", ownerAddress: owner.address },
  tradeConfig: { slippageBps: 100 },
  rpcUrl: config.rpcUrl,
});

const calls = [];
// Runs one SDK call and records its result or error (UniversalError: code, message, data).
async function step(name, run) {
  try {
    const result = await run();
    calls.push({ name, ok: true, result });
    return result;
  } catch (error) {
    calls.push({
      name,
      ok: false,
      error: {
        name: error?.name,
        message: error?.message,
        code: error?.code,
        data: error?.data,
        status: error?.response?.status,
      },
    });
    return undefined;
  }
}

// What the owner signs: the root hash's 32 bytes, EIP-191 (personal_sign).
const sign = (transaction) => owner.signMessage({ message: { raw: transaction.rootHash } });

async function createSignSend(label, create) {
  const transaction = await step(`create${label}Transaction`, create);
  if (!transaction) return undefined;
  const signature = await sign(transaction);
  const sent = await step(`sendTransaction(${label})`, () =>
    ua.sendTransaction(transaction, signature),
  );
  await step(`getTransaction(${label})`, () => ua.getTransaction(transaction.transactionId));
  return { transaction, sent };
}

const options = await step("getSmartAccountOptions", () => ua.getSmartAccountOptions());
await step("getPrimaryAssets", () => ua.getPrimaryAssets());

const transfer = config.transfer;
const transferred = await createSignSend("Transfer", () =>
  ua.createTransferTransaction({
    token: { chainId: transfer.chainId, address: transfer.address },
    amount: transfer.amount,
    receiver: transfer.receiver,
  }),
);

const universal = config.universal;
const universalSent = await createSignSend("Universal", () =>
  ua.createUniversalTransaction({
    chainId: universal.chainId,
    expectTokens: [{ type: universal.type, amount: universal.amount }],
    transactions: [
      {
        to: universal.address,
        data: encodeFunctionData({
          abi: erc20Abi,
          functionName: "transfer",
          args: [universal.receiver, parseUnits(universal.amount, universal.decimals)],
        }),
        value: "0x0",
      },
    ],
  }),
);

const history = await step("getTransactions", () => ua.getTransactions(1, 100));
const tokenHistory = await step("getTokenTransactions", () =>
  ua.getTokenTransactions(config.tokenTransactions),
);
const assets = await step("getPrimaryAssets(final)", () => ua.getPrimaryAssets());

// The owner as the SDK sees it: deposit addresses, balances (the SDK's own rawAmount of each
// chain line) and transaction ids.
const balances = [];
for (const asset of assets?.assets ?? []) {
  for (const line of asset.chainAggregation ?? []) {
    balances.push({
      chainId: line.token.chainId,
      tokenType: asset.tokenType,
      rawAmount: String(line.rawAmount),
      amount: line.amount,
    });
  }
}
const report = {
  ok: calls.every((c) => c.ok),
  owner: owner.address,
  addresses: { evm: options?.smartAccountAddress, solana: options?.solanaSmartAccountAddress },
  balances,
  totalAmountInUSD: assets?.totalAmountInUSD,
  transactions: (history?.transactions ?? []).map((t) => t.transactionId),
  tokenTransactions: (tokenHistory?.transactions ?? []).map((t) => t.transactionId),
  sent: {
    transfer: transferred?.sent,
    universal: universalSent?.sent,
  },
  rootHashes: {
    transfer: transferred?.transaction?.rootHash,
    universal: universalSent?.transaction?.rootHash,
  },
  calls,
};
process.stdout.write(
  JSON.stringify(report, (_, v) => (typeof v === "bigint" ? v.toString() : v)) + "\n",
);
process.exit(report.ok ? 0 : 1);
