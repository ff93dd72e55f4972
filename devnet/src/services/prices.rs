//! The price table: a USD price per token and a gas cost in USD per destination chain. Kept in
//! memory (each server starts from the defaults) and changed by `PUT /devnet/prices`.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use depositkit_core::{DEFAULT_SUPPORTED_TOKENS, TokenType};
use serde_json::{Map, Value, json};

use crate::describe::{json_kind, quote};

/// Prices a server starts with.
pub const DEFAULT_PRICES: [(TokenType, f64); 6] = [
    (TokenType::ETH, 2500.0),
    (TokenType::USDC, 1.0),
    (TokenType::USDT, 1.0),
    (TokenType::BTC, 60_000.0),
    (TokenType::SOL, 150.0),
    (TokenType::BNB, 600.0),
];
/// Gas of a sweep to Ethereum, in USD.
pub const ETHEREUM_GAS_USD: f64 = 0.50;
/// Gas of a sweep to Solana, in USD.
pub const SOLANA_GAS_USD: f64 = 0.01;
/// Gas of a sweep to any other chain, in USD.
pub const DEFAULT_GAS_USD: f64 = 0.03;
/// Largest price or gas cost accepted.
pub const MAX_USD: f64 = 1e12;

/// The price table of one server.
#[derive(Debug)]
pub struct Prices {
    table: Mutex<Table>,
}

#[derive(Debug, Clone)]
struct Table {
    usd: BTreeMap<TokenType, f64>,
    gas: BTreeMap<u64, f64>,
}

impl Default for Prices {
    fn default() -> Self {
        let gas = BTreeMap::from([(1, ETHEREUM_GAS_USD), (101, SOLANA_GAS_USD)]);
        Prices { table: Mutex::new(Table { usd: BTreeMap::from(DEFAULT_PRICES), gas }) }
    }
}

impl Prices {
    /// The USD price of `token`.
    pub fn usd(&self, token: TokenType) -> f64 {
        self.lock().usd.get(&token).copied().unwrap_or(0.0)
    }

    /// The gas cost in USD of a sweep delivering on `chain_id`.
    pub fn gas_usd(&self, chain_id: u64) -> f64 {
        self.lock().gas.get(&chain_id).copied().unwrap_or(DEFAULT_GAS_USD)
    }

    /// Sets the price of `token`.
    ///
    /// # Errors
    /// A price that is not a positive finite number up to 10^12.
    pub fn set_usd(&self, token: TokenType, usd: f64) -> Result<(), String> {
        check(token.symbol(), usd, false)?;
        self.lock().usd.insert(token, usd);
        Ok(())
    }

    /// Applies a `PUT /devnet/prices` body, all or nothing:
    /// `{"ETH": 2600, "USDC": 0.999, "gasUSD": {"8453": 0.05}}`.
    ///
    /// # Errors
    /// A message naming the bad key or value.
    pub fn apply(&self, body: &Value) -> Result<(), String> {
        let Value::Object(entries) = body else {
            return Err(format!(
                "expected an object like {{\"ETH\": 2500}}, found {}",
                json_kind(body)
            ));
        };
        let mut table = self.lock().clone();
        for (key, value) in entries {
            if key == "gasUSD" {
                apply_gas(&mut table, value)?;
                continue;
            }
            let token = key.parse::<TokenType>().map_err(|e| e.message().to_owned())?;
            table.usd.insert(token, number(key, value, false)?);
        }
        *self.lock() = table;
        Ok(())
    }

    /// The table, as `GET`/`PUT /devnet/prices` answer it.
    pub fn snapshot(&self) -> Value {
        let table = self.lock();
        let mut out = Map::new();
        for token in DEFAULT_SUPPORTED_TOKENS {
            out.insert(token.symbol().into(), json!(table.usd.get(&token).copied().unwrap_or(0.0)));
        }
        let gas: Map<String, Value> =
            table.gas.iter().map(|(chain, usd)| (chain.to_string(), json!(usd))).collect();
        out.insert("gasUSD".into(), Value::Object(gas));
        out.insert("defaultGasUSD".into(), json!(DEFAULT_GAS_USD));
        Value::Object(out)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn apply_gas(table: &mut Table, value: &Value) -> Result<(), String> {
    let Value::Object(chains) = value else {
        return Err(format!(
            "\"gasUSD\" must be an object of chain id to USD, found {}",
            json_kind(value)
        ));
    };
    for (chain, usd) in chains {
        let id = chain
            .parse::<u64>()
            .ok()
            .filter(|id| depositkit_core::Chain::from_id(*id).is_some())
            .ok_or_else(|| format!("\"gasUSD\": {} is not a known chain id", quote(chain)))?;
        table.gas.insert(id, number(&format!("gasUSD.{chain}"), usd, true)?);
    }
    Ok(())
}

fn number(key: &str, value: &Value, zero_ok: bool) -> Result<f64, String> {
    let usd = value
        .as_f64()
        .ok_or_else(|| format!("{} must be a number, found {}", quote(key), json_kind(value)))?;
    check(key, usd, zero_ok)?;
    Ok(usd)
}

fn check(key: &str, usd: f64, zero_ok: bool) -> Result<(), String> {
    let low_ok = if zero_ok { usd >= 0.0 } else { usd >= 1e-9 };
    if usd.is_finite() && low_ok && usd <= MAX_USD {
        Ok(())
    } else {
        let low = if zero_ok { "0" } else { "0.000000001" };
        Err(format!("{} must be between {low} and {MAX_USD:e} USD, got {usd}", quote(key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_updates_and_refusals() {
        let prices = Prices::default();
        assert_eq!(prices.usd(TokenType::ETH), 2500.0);
        assert_eq!(prices.gas_usd(1), 0.5);
        assert_eq!(prices.gas_usd(101), 0.01);
        assert_eq!(prices.gas_usd(42161), 0.03);
        prices.apply(&json!({"eth": 3000, "gasUSD": {"8453": 0.05}})).unwrap();
        assert_eq!(prices.usd(TokenType::ETH), 3000.0);
        assert_eq!(prices.gas_usd(8453), 0.05);
        for bad in [
            json!({"ETH": -1}),
            json!({"DOGE": 1}),
            json!({"ETH": "1"}),
            json!({"gasUSD": {"7": 1}}),
            json!([1]),
        ] {
            assert!(prices.apply(&bad).is_err(), "{bad}");
        }
        // All or nothing.
        assert!(prices.apply(&json!({"SOL": 1, "BNB": 0})).is_err());
        assert_eq!(prices.usd(TokenType::SOL), 150.0);
        assert_eq!(prices.snapshot()["gasUSD"]["8453"], 0.05);
    }
}
