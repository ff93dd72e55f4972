// Vectors from the SDK's own helpers (createMultiChainUnsignedData, injectMultiChainSignature)
// and viem's personal_sign, for depositkit's Rust tests.
// Run with the pinned SDK installed where node finds it, e.g.
//   NODE_PATH=/path/to/node_modules node core/tests/particle_fixtures/sdk_vectors.js > core/tests/particle_fixtures/sdk_vectors.json
const path = "";
const sdk = require(path + "@particle-network/universal-account-sdk");
const { privateKeyToAccount } = require(path + "viem/accounts");
const { keccak256, toHex } = require(path + "viem");
const account = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const chains = [1, 56, 101, 8453, 42161, 196];
const realNow = Date.now;
async function main() {
  const vectors = [];
  for (let n = 1; n <= 7; n++) {
    const now = 1700000000000 + n * 1234567;
    const ops = [];
    for (let i = 0; i < n; i++) {
      const hash = keccak256(toHex(`depositkit vector ${n} op ${i}`));
      ops.push({ chainId: chains[(n * 7 + i * 3) % chains.length], userOpHash: hash });
    }
    Date.now = () => now;
    const unsigned = sdk.createMultiChainUnsignedData(ops);
    Date.now = realNow;
    const signature = await account.signMessage({ message: { raw: unsigned.merkleRoot } });
    const tx = {
      transactionId: `TX-${n}`,
      rootHash: unsigned.merkleRoot,
      data: unsigned.data,
      userOps: ops.map((op) => ({ ...op, userOp: { signature: "0x" } })),
    };
    sdk.injectMultiChainSignature(tx, signature, []);
    vectors.push({
      nowMs: now,
      ops,
      rootHash: unsigned.merkleRoot,
      proofs: unsigned.data.map((d) => d.p),
      validUntil: unsigned.data[0].validUntil,
      signature,
      opSignatures: tx.userOps.map((op) => op.userOp.signature),
    });
  }
  console.log(JSON.stringify({
    source: "@particle-network/universal-account-sdk@2.0.3 createMultiChainUnsignedData + injectMultiChainSignature; viem privateKeyToAccount(anvil key 0).signMessage({message: {raw: rootHash}})",
    signer: account.address,
    vectors,
  }, null, 1));
}
main();
