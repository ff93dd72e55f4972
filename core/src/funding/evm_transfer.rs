//! `fund_from_wallet` on an EVM chain (`docs/funding.md` §4): a native transfer or an ERC-20
//! `transfer` from the funding wallet to the deposit address, through the wallet's provider.
//!
//! Every check runs before anything is sent: the wallet is on (or switched to) the balance's
//! chain; the gas price is `eth_gasPrice × 1.25`, sent as a legacy `gasPrice` so the cost is at
//! most `gas × gasPrice`; a native transfer leaves exactly that for gas (the "gas-adjusted
//! maximum"); an ERC-20 transfer's gas is `eth_estimateGas × 1.2` and the native balance must
//! cover it. The wait for the receipt is bounded by the client's call timeout.

use std::sync::Arc;

use alloy_primitives::{Address, B256};
use serde_json::{Value, json};

use super::Funding;
use super::balance::FundingBalance;
use super::provider::{Serialized, hex_u64};
use super::transfer::{
    Deadline, FundingTransferResult, check_native_amount, deposit_address, funding_error, human,
    other_wallet, provider_failure, rpc_failure,
};
use crate::chain::erc20;
use crate::chain::evm::{EvmRpc, Receipt, quantity, quantity_u256};
use crate::chain::rpc::poll_until;
use crate::chains::{Chain, get_chain_name};
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::funding::balances::native_token;
use crate::units::{U256, format_units};

/// Gas of a plain native transfer.
const NATIVE_TRANSFER_GAS: u64 = 21_000;

/// Where the chain's state is read: the configured node of the chain when
/// `funding.evmRpcUrls` names one, else the wallet's own provider.
enum Reader {
    Node(Arc<EvmRpc>),
    Wallet(Arc<Serialized>),
}

impl Reader {
    fn read(&self, chain_id: u64, method: &str, params: Value) -> Result<Value> {
        match self {
            Reader::Node(node) => {
                node.request(method, params).map_err(|e| rpc_failure(chain_id, e))
            }
            Reader::Wallet(provider) => provider
                .request(method, &params)
                .map_err(|e| provider_failure(chain_id, method, &e)),
        }
    }

    fn quantity(&self, chain_id: u64, method: &str, params: Value) -> Result<U256> {
        let value = self.read(chain_id, method, params)?;
        quantity_u256(method, &value).map_err(|e| rpc_failure(chain_id, e))
    }
}

impl Funding {
    /// Sends `raw_amount` (default: the gas-adjusted maximum) of `balance` to `to`.
    pub(crate) fn fund_evm(
        &self,
        balance: &FundingBalance,
        raw_amount: Option<U256>,
        to: &str,
        deadline: Deadline,
    ) -> Result<FundingTransferResult> {
        let chain_id = balance.chain_id();
        let chain = Chain::from_id(chain_id)
            .ok_or_else(|| Error::new(ErrorKind::Internal, format!("unknown chain {chain_id}")))?;
        let native = native_token(chain).ok_or_else(|| {
            funding_error(format!("{} has no native token depositkit knows", chain.name()))
        })?;
        let native_decimals = 18;
        let (provider, from) = self.evm_wallet()?;
        if !balance.wallet_address().eq_ignore_ascii_case(&from) {
            return Err(other_wallet(balance, "EVM", &from));
        }
        let to_address: Address = deposit_address(to, "an EVM address")?;
        self.switch_chain(&provider, chain_id)?;
        // Only a node the host configured for the chain, never the public default: without one
        // the wallet's own provider reads the chain.
        let configured = self.config.evm_rpc_urls.contains_key(&chain_id);
        let reader = match configured.then(|| self.evm_node(chain_id)).flatten() {
            Some(node) => Reader::Node(node),
            None => Reader::Wallet(Arc::clone(&provider)),
        };
        let base_price = reader.quantity(chain_id, "eth_gasPrice", json!([]))?;
        // × 1.25, rounded up: headroom for the next blocks' base fee.
        let gas_price =
            (base_price.saturating_mul(U256::from(5u64)) + U256::from(3u64)) / U256::from(4u64);
        let held_native = reader.quantity(chain_id, "eth_getBalance", json!([from, "latest"]))?;
        let sym = native.symbol();
        let (tx, amount) = match balance.token_address() {
            None => {
                let fee = U256::from(NATIVE_TRANSFER_GAS).saturating_mul(gas_price);
                let max = held_native.checked_sub(fee).filter(|m| !m.is_zero()).ok_or_else(|| {
                    funding_error(format!(
                        "insufficient gas: a transfer on {} needs {} for gas ({NATIVE_TRANSFER_GAS} gas at {gas_price} wei), the wallet holds {}",
                        chain.name(),
                        human(fee, native_decimals, sym),
                        human(held_native, native_decimals, sym)
                    ))
                })?;
                let amount = raw_amount.unwrap_or(max);
                check_native_amount(amount, held_native, fee, max, "gas", |v| {
                    human(v, native_decimals, sym)
                })?;
                let tx = json!({
                    "from": from, "to": to, "value": quantity(amount),
                    "gas": quantity(U256::from(NATIVE_TRANSFER_GAS)), "gasPrice": quantity(gas_price),
                });
                (tx, amount)
            }
            Some(token_address) => {
                let token_sym = balance.token().symbol();
                let owner: Address = from.parse().map_err(|_| {
                    Error::new(ErrorKind::Internal, "stored EVM wallet address is invalid")
                })?;
                let data =
                    alloy_primitives::hex::encode_prefixed(erc20::balance_of_calldata(owner));
                let answer = reader.read(
                    chain_id,
                    "eth_call",
                    json!([{"to": token_address, "data": data}, "latest"]),
                )?;
                let held =
                    answer.as_str().map(erc20::decode_u256).transpose().ok().flatten().ok_or_else(
                        || {
                            funding_error(format!(
                                "RPC failure on {}: balanceOf answered {}",
                                chain.name(),
                                quote(&answer.to_string())
                            ))
                        },
                    )?;
                let amount = raw_amount.unwrap_or(held);
                if amount.is_zero() || amount > held {
                    return Err(funding_error(format!(
                        "insufficient funds: sending {} needs more than the wallet's {} on {}",
                        human(amount, balance.decimals(), token_sym),
                        human(held, balance.decimals(), token_sym),
                        chain.name()
                    )));
                }
                let data = alloy_primitives::hex::encode_prefixed(erc20::transfer_calldata(
                    to_address, amount,
                ));
                let call = json!({"from": from, "to": token_address, "value": "0x0", "data": data});
                let estimate = reader.quantity(chain_id, "eth_estimateGas", json!([call]))?;
                // × 1.2, rounded up.
                let gas = (estimate.saturating_mul(U256::from(6u64)) + U256::from(4u64))
                    / U256::from(5u64);
                let fee = gas.saturating_mul(gas_price);
                if held_native < fee {
                    return Err(funding_error(format!(
                        "insufficient gas: a {token_sym} transfer on {} needs {} for gas ({gas} gas at {gas_price} wei), the wallet holds {}",
                        chain.name(),
                        human(fee, native_decimals, sym),
                        human(held_native, native_decimals, sym)
                    )));
                }
                let tx = json!({
                    "from": from, "to": token_address, "value": "0x0", "data": data,
                    "gas": quantity(gas), "gasPrice": quantity(gas_price),
                });
                (tx, amount)
            }
        };
        let sent = provider
            .request("eth_sendTransaction", &json!([tx]))
            .map_err(|e| provider_failure(chain_id, "eth_sendTransaction", &e))?;
        let hash = sent.as_str().and_then(|t| t.parse::<B256>().ok()).ok_or_else(|| {
            funding_error(format!(
                "the wallet answered eth_sendTransaction with {}, not a transaction hash",
                quote(&sent.to_string())
            ))
        })?;
        let receipt = wait_receipt(&reader, chain_id, hash, deadline)?;
        if !receipt.status {
            return Err(funding_error(format!("transaction {hash} reverted")));
        }
        Ok(FundingTransferResult {
            tx_hash: hash.to_string(),
            chain_id,
            token: balance.token(),
            raw_amount: amount,
            amount: format_units(amount, u32::from(balance.decimals()))?,
            from,
            to: to.to_owned(),
        })
    }

    /// Moves the wallet to `chain_id` when it is elsewhere (`wallet_switchEthereumChain`).
    fn switch_chain(&self, provider: &Serialized, chain_id: u64) -> Result<()> {
        let current = |provider: &Serialized| -> Result<u64> {
            let answer = provider
                .request("eth_chainId", &json!([]))
                .map_err(|e| provider_failure(chain_id, "eth_chainId", &e))?;
            hex_u64(&answer).ok_or_else(|| {
                funding_error(format!(
                    "the wallet answered eth_chainId with {}",
                    quote(&answer.to_string())
                ))
            })
        };
        if current(provider)? == chain_id {
            return Ok(());
        }
        provider
            .request("wallet_switchEthereumChain", &json!([{"chainId": format!("0x{chain_id:x}")}]))
            .map_err(|e| provider_failure(chain_id, "wallet_switchEthereumChain", &e))?;
        let now = current(provider)?;
        if now != chain_id {
            return Err(funding_error(format!(
                "the wallet is on chain {now}, not {} ({chain_id}), after wallet_switchEthereumChain",
                get_chain_name(chain_id)
            )));
        }
        Ok(())
    }
}

fn wait_receipt(reader: &Reader, chain_id: u64, hash: B256, deadline: Deadline) -> Result<Receipt> {
    let receipt = || {
        let answer =
            reader.read(chain_id, "eth_getTransactionReceipt", json!([hash.to_string()]))?;
        if answer.is_null() {
            return Ok(None);
        }
        Receipt::from_json(&answer).map(Some).map_err(|e| rpc_failure(chain_id, e))
    };
    poll_until(deadline.at(), receipt, || {
        Error::new(
            ErrorKind::Timeout,
            format!(
                "transaction {hash} was sent on {} but has no receipt yet; it may still be mined",
                get_chain_name(chain_id)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deposit::FundingConfig;
    use crate::funding::balance::BalanceSource;
    use crate::funding::provider::{EvmProvider, ProviderError, WalletProvider};
    use crate::services::HttpSettings;
    use crate::tokens::TokenType;
    use std::sync::Mutex;
    use std::time::Duration;

    const WALLET: &str = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
    const DEPOSIT: &str = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
    const USDC_BASE: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
    const GWEI: u64 = 1_000_000_000;

    /// A wallet on a pretend Base: 1 gwei gas, a fixed native and USDC balance, and every
    /// request recorded.
    struct Chain {
        chain: Mutex<u64>,
        native: U256,
        usdc: U256,
        reject_send: bool,
        revert: bool,
        calls: Mutex<Vec<(String, Value)>>,
    }

    impl WalletProvider for Chain {
        fn request(
            &self,
            method: &str,
            params: &Value,
        ) -> std::result::Result<Value, ProviderError> {
            self.calls.lock().unwrap().push((method.to_owned(), params.clone()));
            match method {
                "eth_accounts" | "eth_requestAccounts" => Ok(json!([WALLET])),
                "eth_chainId" => Ok(json!(format!("0x{:x}", *self.chain.lock().unwrap()))),
                "wallet_switchEthereumChain" => {
                    *self.chain.lock().unwrap() = 8453;
                    Ok(Value::Null)
                }
                "eth_gasPrice" => Ok(json!(quantity(U256::from(GWEI)))),
                "eth_getBalance" => Ok(json!(quantity(self.native))),
                "eth_call" => Ok(json!(format!("0x{:064x}", self.usdc))),
                "eth_estimateGas" => Ok(json!("0xc350")), // 50,000
                "eth_sendTransaction" if self.reject_send => {
                    Err(ProviderError::rejected("User denied transaction signature."))
                }
                "eth_sendTransaction" => Ok(json!(format!("0x{}", "ab".repeat(32)))),
                "eth_getTransactionReceipt" => Ok(json!({
                    "transactionHash": format!("0x{}", "ab".repeat(32)),
                    "status": if self.revert { "0x0" } else { "0x1" },
                    "gasUsed": "0x5208", "effectiveGasPrice": "0x1", "blockNumber": "0x1",
                    "from": WALLET, "to": DEPOSIT, "logs": []
                })),
                _ => Err(ProviderError::new(4200, "unsupported")),
            }
        }
    }

    fn pretend(native: U256, usdc: U256) -> Chain {
        Chain {
            chain: Mutex::new(1),
            native,
            usdc,
            reject_send: false,
            revert: false,
            calls: Mutex::new(Vec::new()),
        }
    }

    fn setup(chain: Chain) -> (Funding, Arc<Chain>) {
        let f = Funding::new(
            FundingConfig { enabled: true, ..Default::default() },
            0.5,
            HttpSettings::default(),
        );
        let chain = Arc::new(chain);
        f.set_evm_wallet(EvmProvider::Host(Arc::clone(&chain) as Arc<dyn WalletProvider>), None)
            .unwrap();
        (f, chain)
    }

    fn balance(f: &Funding, token: TokenType, raw: U256) -> FundingBalance {
        FundingBalance {
            client_id: f.client_id,
            chain_id: 8453,
            token,
            token_address: (token == TokenType::USDC).then(|| USDC_BASE.to_owned()),
            decimals: if token == TokenType::USDC { 6 } else { 18 },
            raw_amount: raw,
            amount: String::new(),
            price_usd: None,
            value_usd: None,
            wallet_address: WALLET.into(),
            source: BalanceSource::Rpc,
        }
    }

    fn sent(chain: &Chain) -> Option<Value> {
        chain
            .calls
            .lock()
            .unwrap()
            .iter()
            .find(|(m, _)| m == "eth_sendTransaction")
            .map(|(_, p)| p[0].clone())
    }

    fn deadline() -> Deadline {
        Deadline::within(Duration::from_secs(5))
    }

    #[test]
    fn native_maximum_leaves_exactly_the_gas() {
        let held = U256::from(10u64).pow(U256::from(18u64));
        let (f, chain) = setup(pretend(held, U256::ZERO));
        let b = balance(&f, TokenType::ETH, held);
        let result = f.fund_evm(&b, None, DEPOSIT, deadline()).unwrap();
        // 1 gwei × 1.25 = 1.25 gwei; 21,000 gas.
        let fee = U256::from(21_000u64 * 1_250_000_000);
        assert_eq!(result.raw_amount, held - fee);
        let tx = sent(&chain).unwrap();
        assert_eq!(tx["gasPrice"], json!(quantity(U256::from(1_250_000_000u64))));
        assert_eq!(tx["gas"], json!("0x5208"));
        assert_eq!(tx["to"], json!(DEPOSIT));
        assert!(tx.get("data").is_none());
        assert_eq!(result.tx_hash, format!("0x{}", "ab".repeat(32)));
        let methods: Vec<String> =
            chain.calls.lock().unwrap().iter().map(|(m, _)| m.clone()).collect();
        assert!(methods.contains(&"wallet_switchEthereumChain".to_owned()), "{methods:?}");
    }

    #[test]
    fn native_checks_before_sending() {
        let (f, chain) = setup(pretend(U256::from(1000u64), U256::ZERO));
        let err = f.fund_evm(
            &balance(&f, TokenType::ETH, U256::from(1000u64)),
            None,
            DEPOSIT,
            deadline(),
        );
        let err = err.unwrap_err();
        assert!(err.message().starts_with("insufficient gas: a transfer on Base needs"), "{err}");
        assert!(sent(&chain).is_none());
        let held = U256::from(GWEI) * U256::from(1_000_000u64);
        let (f, chain) = setup(pretend(held, U256::ZERO));
        let b = balance(&f, TokenType::ETH, held);
        let err = f.fund_evm(&b, Some(held + U256::from(1u64)), DEPOSIT, deadline()).unwrap_err();
        assert!(err.message().starts_with("insufficient funds:"), "{err}");
        let err = f.fund_evm(&b, Some(held), DEPOSIT, deadline()).unwrap_err();
        assert!(
            err.message().starts_with("insufficient gas: sending 0.001 ETH leaves 0 ETH"),
            "{err}"
        );
        assert!(sent(&chain).is_none());
    }

    #[test]
    fn erc20_needs_gas_and_funds() {
        let usdc = U256::from(25_000_000u64);
        let (f, chain) = setup(pretend(U256::ZERO, usdc));
        let b = balance(&f, TokenType::USDC, usdc);
        let err = f.fund_evm(&b, None, DEPOSIT, deadline()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Funding);
        assert!(
            err.message().starts_with("insufficient gas: a USDC transfer on Base needs"),
            "{err}"
        );
        assert!(err.message().contains("the wallet holds 0 ETH"), "{err}");
        assert!(sent(&chain).is_none());
        let (f, chain) = setup(pretend(U256::from(GWEI) * U256::from(GWEI), usdc));
        let b = balance(&f, TokenType::USDC, usdc);
        let err = f.fund_evm(&b, Some(usdc + U256::from(1u64)), DEPOSIT, deadline()).unwrap_err();
        assert!(err.message().starts_with("insufficient funds: sending 25.000001 USDC"), "{err}");
        let result = f.fund_evm(&b, Some(U256::from(1_000_000u64)), DEPOSIT, deadline()).unwrap();
        assert_eq!((result.amount.as_str(), result.token), ("1", TokenType::USDC));
        let tx = sent(&chain).unwrap();
        assert_eq!(tx["to"], json!(USDC_BASE));
        assert_eq!(tx["gas"], json!(quantity(U256::from(60_000u64))), "50,000 × 1.2");
        let data = tx["data"].as_str().unwrap();
        assert!(data.starts_with("0xa9059cbb"), "{data}");
    }

    #[test]
    fn rejection_and_revert() {
        let held = U256::from(10u64).pow(U256::from(18u64));
        let mut c = pretend(held, U256::ZERO);
        c.reject_send = true;
        let (f, _) = setup(c);
        let err =
            f.fund_evm(&balance(&f, TokenType::ETH, held), None, DEPOSIT, deadline()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "rejected by the wallet (4001): User denied transaction signature."
        );
        let mut c = pretend(held, U256::ZERO);
        c.revert = true;
        let (f, _) = setup(c);
        let err =
            f.fund_evm(&balance(&f, TokenType::ETH, held), None, DEPOSIT, deadline()).unwrap_err();
        assert_eq!(err.to_string(), format!("transaction 0x{} reverted", "ab".repeat(32)));
    }

    #[test]
    fn another_wallets_balance_is_refused() {
        let (f, chain) = setup(pretend(U256::from(1u64), U256::ZERO));
        let mut b = balance(&f, TokenType::ETH, U256::from(1u64));
        b.wallet_address = DEPOSIT.into();
        let err = f.fund_evm(&b, None, DEPOSIT, deadline()).unwrap_err();
        assert!(err.message().contains("call get_wallet_balances() again"), "{err}");
        assert!(sent(&chain).is_none());
    }
}
