//! Discovering the funding wallets' balances (`docs/funding.md` §3).
//!
//! One source answers, chosen by precedence: the host's balance provider, then
//! `funding.balanceProvider: "rpc"` (the chains directly), then the balance API with
//! `funding.apiKey`, then the host's proxy (`funding.proxyUrl`), then the maker's hosted proxy.
//! Every source answers the same lines; the client keeps those of the five funding chains and
//! known tokens with a positive amount and, when priced, a value of at least the minimum.

use std::sync::Arc;

use alloy_primitives::Address;
use serde_json::{Value, json};

use super::Funding;
use super::balance::{BalanceSource, FundingBalance};
use super::provider::Serialized;
use super::solana_transfer::pick_token_account;
use super::transfer::funding_error;
use super::wallet::wallet_failure;
use crate::chain::erc20;
use crate::chain::solana_tx::Pubkey;
use crate::chains::{AddressType, Chain, get_chain_name};
use crate::deposit::config::{BALANCE_PROVIDER_RPC, DEFAULT_BALANCE_PROXY_URL};
use crate::describe::{json_kind, quote};
use crate::error::{Error, ErrorKind, Result};
use crate::tokens::{DEFAULT_SUPPORTED_TOKENS, TokenType, token_info};
use crate::units::{U256, format_units};

/// The chains balance discovery covers: Ethereum, BNB Chain, Base, Arbitrum and Solana (never
/// X Layer).
pub const FUNDING_CHAINS: [u64; 5] = [1, 56, 8453, 42161, 101];

/// The path every HTTP balance source serves.
const WALLET_BALANCES_PATH: &str = "/v1/wallet-balances";

/// A balance line as a source reports it, with the token resolved.
#[derive(Debug, Clone, PartialEq)]
struct Line {
    chain_id: u64,
    token: TokenType,
    raw_amount: U256,
    price_usd: Option<f64>,
    value_usd: Option<f64>,
}

/// Where this call's balances come from.
enum Source {
    Provider(Arc<Serialized>),
    Rpc,
    Http { kind: BalanceSource, base: String, key: Option<String> },
}

/// The chain's native token (ETH, BNB, SOL).
pub(crate) fn native_token(chain: Chain) -> Option<TokenType> {
    DEFAULT_SUPPORTED_TOKENS
        .into_iter()
        .find(|t| token_info(*t, chain).is_some_and(|i| i.is_native()))
}

/// The request body of every source (and the balance provider's params).
fn request_body(evm: Option<&str>, solana: Option<&Pubkey>) -> Value {
    json!({
        "evmAddress": evm,
        "solanaAddress": solana.map(ToString::to_string),
        "chainIds": FUNDING_CHAINS,
    })
}

impl Funding {
    fn source(&self) -> Source {
        if let Some(provider) = self.wallets().balance_provider.clone() {
            return Source::Provider(provider);
        }
        if self.config.balance_provider.as_deref() == Some(BALANCE_PROVIDER_RPC) {
            return Source::Rpc;
        }
        if let Some(key) = &self.config.api_key {
            return Source::Http {
                kind: BalanceSource::ApiKey,
                base: self.config.balance_api_url().to_owned(),
                key: Some(key.clone()),
            };
        }
        if let Some(proxy) = &self.config.proxy_url {
            return Source::Http { kind: BalanceSource::Proxy, base: proxy.clone(), key: None };
        }
        Source::Http {
            kind: BalanceSource::Hosted,
            base: DEFAULT_BALANCE_PROXY_URL.to_owned(),
            key: None,
        }
    }

    /// The balances of the connected funding wallets worth offering.
    pub(crate) fn wallet_balances(&self) -> Result<Vec<FundingBalance>> {
        let (has_evm, solana) = self.discovery_targets();
        // An EVM wallet whose account is not known yet is asked for it (eth_accounts).
        let evm = if has_evm { Some(self.evm_wallet()?.1) } else { None };
        if evm.is_none() && solana.is_none() {
            return Err(funding_error(
                "no funding wallet is connected: call connect_evm_wallet() or connect_solana_wallet() first",
            ));
        }
        let (kind, lines) = match self.source() {
            Source::Provider(provider) => {
                let params = request_body(evm.as_deref(), solana.as_ref());
                let answer = provider
                    .request("getWalletBalances", &params)
                    .map_err(|e| wallet_failure("getWalletBalances", &e))
                    .map_err(|e| source_failed(BalanceSource::Provider, None, &e))?;
                (BalanceSource::Provider, parse_answer(BalanceSource::Provider, &answer)?)
            }
            Source::Rpc => {
                let address =
                    evm.as_deref().map(|a| a.parse::<Address>()).transpose().map_err(|_| {
                        Error::new(ErrorKind::Internal, "stored EVM address is invalid")
                    })?;
                (BalanceSource::Rpc, self.discover(address, solana)?)
            }
            Source::Http { kind, base, key } => {
                let body = request_body(evm.as_deref(), solana.as_ref());
                let answer = self.post_balances(kind, &base, key.as_deref(), &body)?;
                (kind, parse_answer(kind, &answer)?)
            }
        };
        let solana_text = solana.map(|k| k.to_string());
        Ok(lines
            .into_iter()
            .filter_map(|line| {
                let wallet = match Chain::from_id(line.chain_id)?.address_type() {
                    AddressType::Evm => evm.clone()?,
                    AddressType::Solana => solana_text.clone()?,
                };
                self.offer(line, wallet, kind)
            })
            .collect())
    }

    /// The balance to offer for `line`, or `None` when the rules of §3 drop it.
    fn offer(&self, line: Line, wallet: String, source: BalanceSource) -> Option<FundingBalance> {
        let info = token_info(line.token, Chain::from_id(line.chain_id)?)?;
        if line.raw_amount.is_zero() {
            return None;
        }
        let amount = format_units(line.raw_amount, u32::from(info.decimals)).ok()?;
        let value_usd = line
            .value_usd
            .or_else(|| Some(line.price_usd? * amount.parse::<f64>().ok()?))
            .filter(|v| v.is_finite());
        if let Some(value) = value_usd
            && value < self.min_value_usd
        {
            return None;
        }
        Some(FundingBalance {
            client_id: self.client_id,
            chain_id: line.chain_id,
            token: line.token,
            token_address: info.contract.map(str::to_owned),
            decimals: info.decimals,
            raw_amount: line.raw_amount,
            amount,
            price_usd: line.price_usd,
            value_usd,
            wallet_address: wallet,
            source,
        })
    }

    fn post_balances(
        &self,
        kind: BalanceSource,
        base: &str,
        key: Option<&str>,
        body: &Value,
    ) -> Result<Value> {
        let url = format!("{}{WALLET_BALANCES_PATH}", base.trim_end_matches('/'));
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(key) = key {
            headers.push(("X-API-Key", key));
        }
        let scrub = |text: &str| match key {
            Some(key) if text.contains(key) => text.replace(key, "<redacted>"),
            _ => text.to_owned(),
        };
        let reply = self.poster.post(&url, &headers, &body.to_string()).map_err(|e| {
            source_failed(kind, Some(&url), &Error::new(e.kind(), scrub(e.message())))
        })?;
        let parsed: Option<Value> = serde_json::from_str(&reply.body).ok();
        if !(200..300).contains(&reply.status) {
            let error = parsed.as_ref().and_then(|v| v.get("error"));
            let code = error.and_then(|e| e.get("code")).and_then(Value::as_str).unwrap_or("");
            let message = error
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .map(&scrub)
                .unwrap_or_else(|| quote(&scrub(reply.body.trim())));
            return Err(source_failed(
                kind,
                Some(&url),
                &funding_error(format!("HTTP {} {code}: {message}", reply.status)),
            ));
        }
        parsed.ok_or_else(|| {
            source_failed(
                kind,
                Some(&url),
                &funding_error(format!("malformed JSON: {}", quote(&scrub(reply.body.trim())))),
            )
        })
    }

    /// RPC discovery: every chain at once, one thread each.
    fn discover(&self, evm: Option<Address>, solana: Option<Pubkey>) -> Result<Vec<Line>> {
        std::thread::scope(|scope| {
            let mut jobs = Vec::new();
            let evm_chains = FUNDING_CHAINS.iter().filter(|id| **id != Chain::SOLANA.id());
            for chain_id in evm_chains.filter(|_| evm.is_some()) {
                let (chain_id, owner) = (*chain_id, evm);
                let job = std::thread::Builder::new()
                    .name("depositkit-balances".into())
                    .spawn_scoped(scope, move || match owner {
                        Some(owner) => self.discover_evm(chain_id, owner),
                        None => Ok(Vec::new()),
                    });
                jobs.push((chain_id, job));
            }
            if let Some(owner) = solana {
                let job = std::thread::Builder::new()
                    .name("depositkit-balances".into())
                    .spawn_scoped(scope, move || self.discover_solana(&owner));
                jobs.push((Chain::SOLANA.id(), job));
            }
            let mut lines = Vec::new();
            for (chain_id, job) in jobs {
                let job = job.map_err(|e| {
                    Error::new(ErrorKind::Internal, format!("cannot start a balance thread: {e}"))
                })?;
                let found = job.join().map_err(|_| {
                    Error::new(
                        ErrorKind::Internal,
                        format!("balance discovery on {} panicked", get_chain_name(chain_id)),
                    )
                })?;
                lines.extend(found.map_err(|e| {
                    source_failed(
                        BalanceSource::Rpc,
                        None,
                        &Error::new(
                            e.kind(),
                            format!("RPC failure on {}: {}", get_chain_name(chain_id), e.message()),
                        ),
                    )
                })?);
            }
            Ok(lines)
        })
    }

    fn discover_evm(&self, chain_id: u64, owner: Address) -> Result<Vec<Line>> {
        let chain = Chain::from_id(chain_id)
            .ok_or_else(|| Error::new(ErrorKind::Internal, format!("unknown chain {chain_id}")))?;
        let node = self
            .evm_node(chain_id)
            .ok_or_else(|| funding_error("no RPC URL (set funding.evmRpcUrls)"))?;
        let mut lines = Vec::new();
        if let Some(native) = native_token(chain) {
            lines.push(Line {
                chain_id,
                token: native,
                raw_amount: node.balance(owner)?,
                price_usd: None,
                value_usd: None,
            });
        }
        for token in DEFAULT_SUPPORTED_TOKENS {
            let Some(contract) = token_info(token, chain).and_then(|i| i.contract) else {
                continue;
            };
            let address = contract.parse::<Address>().map_err(|_| {
                Error::new(ErrorKind::Internal, format!("bad token table entry {contract}"))
            })?;
            let data = alloy_primitives::hex::encode_prefixed(erc20::balance_of_calldata(owner));
            let bytes = node.call(&json!({"to": contract, "data": data}))?;
            // No code at the address (the token is not deployed on this node): no balance.
            let raw = if bytes.is_empty() {
                U256::ZERO
            } else {
                erc20::decode_u256_bytes(&bytes).ok_or_else(|| {
                    Error::new(
                        ErrorKind::Protocol,
                        format!("balanceOf on {address} answered {} bytes", bytes.len()),
                    )
                })?
            };
            lines.push(Line {
                chain_id,
                token,
                raw_amount: raw,
                price_usd: token.is_stablecoin().then_some(1.0),
                value_usd: None,
            });
        }
        Ok(lines)
    }

    fn discover_solana(&self, owner: &Pubkey) -> Result<Vec<Line>> {
        let node = self.solana_node();
        let mut lines = vec![Line {
            chain_id: Chain::SOLANA.id(),
            token: TokenType::SOL,
            raw_amount: U256::from(node.balance(owner)?),
            price_usd: None,
            value_usd: None,
        }];
        for token in DEFAULT_SUPPORTED_TOKENS {
            let Some(mint) = token_info(token, Chain::SOLANA).and_then(|i| i.contract) else {
                continue;
            };
            let mint: Pubkey = mint.parse()?;
            let accounts = node.token_accounts_by_owner(owner, &mint)?;
            let raw = pick_token_account(&accounts, owner, &mint).map_or(0, |a| a.raw_amount);
            lines.push(Line {
                chain_id: Chain::SOLANA.id(),
                token,
                raw_amount: U256::from(raw),
                price_usd: token.is_stablecoin().then_some(1.0),
                value_usd: None,
            });
        }
        Ok(lines)
    }
}

/// A source's failure as a [`ErrorKind::Funding`] error naming the source (never a key).
fn source_failed(kind: BalanceSource, url: Option<&str>, error: &Error) -> Error {
    let at = url.map(|u| format!(" ({u})")).unwrap_or_default();
    let out_kind =
        if error.kind() == ErrorKind::Timeout { ErrorKind::Timeout } else { ErrorKind::Funding };
    Error::new(
        out_kind,
        format!("wallet balances from {}{at} failed: {}", kind.describe(), error.message()),
    )
}

/// Reads a source's answer: the `balances` array, or the array itself. Lines of other chains
/// or unknown tokens are skipped; a line of a known token that cannot be read is an error.
fn parse_answer(kind: BalanceSource, answer: &Value) -> Result<Vec<Line>> {
    let bad = |why: String| source_failed(kind, None, &funding_error(why));
    let items =
        answer.get("balances").unwrap_or(answer).as_array().ok_or_else(|| {
            bad(format!("the answer is {}, not a balances array", json_kind(answer)))
        })?;
    let mut lines = Vec::new();
    for item in items {
        let Some(chain_id) = item.get("chainId").and_then(Value::as_u64) else {
            return Err(bad(format!(
                "a balance line has no chainId: {}",
                quote(&item.to_string())
            )));
        };
        let Some(chain) = Chain::from_id(chain_id).filter(|_| FUNDING_CHAINS.contains(&chain_id))
        else {
            continue;
        };
        let Some(token) =
            item.get("token").and_then(Value::as_str).and_then(|t| t.parse::<TokenType>().ok())
        else {
            continue;
        };
        let Some(info) = token_info(token, chain) else { continue };
        let token_address = match item.get("tokenAddress") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => {
                return Err(bad(format!("tokenAddress is {}", json_kind(other))));
            }
        };
        // The contract must be the one depositkit knows: a transfer goes to that contract.
        if let (Some(ours), Some(theirs)) = (info.contract, token_address.as_deref()) {
            let same = match chain.address_type() {
                AddressType::Evm => ours.eq_ignore_ascii_case(theirs),
                AddressType::Solana => ours == theirs,
            };
            if !same {
                continue;
            }
        }
        if let Some(decimals) = item.get("decimals").and_then(Value::as_u64)
            && decimals != u64::from(info.decimals)
        {
            continue;
        }
        let raw_amount = match item.get("rawAmount") {
            Some(Value::String(text)) => text.parse::<U256>().ok(),
            Some(Value::Number(n)) => n.as_u64().map(U256::from),
            _ => None,
        }
        .ok_or_else(|| bad(format!("a {token} line on {} has no valid rawAmount", chain.name())))?;
        let number = |name: &str| item.get(name).and_then(Value::as_f64).filter(|v| v.is_finite());
        lines.push(Line {
            chain_id,
            token,
            raw_amount,
            price_usd: number("priceUSD"),
            value_usd: number("valueUSD"),
        });
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deposit::FundingConfig;
    use crate::services::HttpSettings;

    fn funding(min: Option<f64>) -> Funding {
        let config = FundingConfig { enabled: true, min_value_usd: min, ..Default::default() };
        Funding::new(config, 0.5, HttpSettings::default())
    }

    #[test]
    fn natives() {
        assert_eq!(native_token(Chain::BNB), Some(TokenType::BNB));
        assert_eq!(native_token(Chain::BASE), Some(TokenType::ETH));
        assert_eq!(native_token(Chain::SOLANA), Some(TokenType::SOL));
    }

    #[test]
    fn answers_are_filtered_by_the_rules() {
        let answer = json!({"balances": [
            {"chainId": 8453, "token": "USDC", "tokenAddress": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
             "decimals": 6, "rawAmount": "25000000", "priceUSD": 1.0, "valueUSD": 25.0},
            {"chainId": 8453, "token": "ETH", "tokenAddress": null, "decimals": 18,
             "rawAmount": "1000000000000000", "priceUSD": null, "valueUSD": null},
            {"chainId": 196, "token": "USDC", "rawAmount": "99000000", "valueUSD": 99.0},
            {"chainId": 10, "token": "USDC", "rawAmount": "99000000", "valueUSD": 99.0},
            {"chainId": 1, "token": "DOGE", "rawAmount": "5"},
            {"chainId": 1, "token": "USDT", "tokenAddress": "0xdAC17F958D2ee523a2206206994597C13D831ec7",
             "decimals": 6, "rawAmount": "100000", "priceUSD": 1.0, "valueUSD": 0.1},
            {"chainId": 42161, "token": "USDC", "tokenAddress": "0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8",
             "decimals": 6, "rawAmount": "5000000", "valueUSD": 5.0},
            {"chainId": 56, "token": "USDC", "tokenAddress": "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d",
             "decimals": 18, "rawAmount": "0", "valueUSD": 0.0},
            {"chainId": 101, "token": "USDC", "tokenAddress": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
             "decimals": 6, "rawAmount": 3000000, "priceUSD": 1.0}
        ]});
        let lines = parse_answer(BalanceSource::Proxy, &answer).unwrap();
        // X Layer, OP, DOGE and the bridged USDC.e are gone.
        assert_eq!(lines.len(), 5);
        let f = funding(None);
        let wallet = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266".to_owned();
        let offered: Vec<FundingBalance> = lines
            .into_iter()
            .filter_map(|l| f.offer(l, wallet.clone(), BalanceSource::Proxy))
            .collect();
        let summary: Vec<(u64, TokenType, Option<f64>)> =
            offered.iter().map(|b| (b.chain_id(), b.token(), b.value_usd())).collect();
        // The 0.10 USD line is below the client's minimum (0.5); the zero line is dropped;
        // unpriced native ETH is offered; Solana's value is computed from its price.
        assert_eq!(
            summary,
            [
                (8453, TokenType::USDC, Some(25.0)),
                (8453, TokenType::ETH, None),
                (101, TokenType::USDC, Some(3.0)),
            ]
        );
        assert_eq!(offered[0].token_address(), Some("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"));
        assert_eq!(offered[1].amount(), "0.001");
        let f = funding(Some(0.05));
        let lines = parse_answer(BalanceSource::Proxy, &answer).unwrap();
        let n = lines
            .into_iter()
            .filter_map(|l| f.offer(l, wallet.clone(), BalanceSource::Proxy))
            .count();
        assert_eq!(n, 4, "funding.minValueUSD overrides the client's");
    }

    #[test]
    fn malformed_answers() {
        let err = parse_answer(BalanceSource::ApiKey, &json!({"x": 1})).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Funding);
        assert!(err.message().starts_with("wallet balances from the balance API failed"), "{err}");
        let err = parse_answer(
            BalanceSource::ApiKey,
            &json!([{"chainId": 1, "token": "USDC", "rawAmount": "x"}]),
        )
        .unwrap_err();
        assert!(err.message().contains("no valid rawAmount"), "{err}");
        assert_eq!(parse_answer(BalanceSource::ApiKey, &json!([])).unwrap(), []);
    }

    #[test]
    fn request_shape() {
        let key: Pubkey = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM".parse().unwrap();
        assert_eq!(
            request_body(None, Some(&key)),
            json!({"evmAddress": null, "solanaAddress": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
                   "chainIds": [1, 56, 8453, 42161, 101]})
        );
    }
}
