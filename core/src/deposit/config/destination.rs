//! The destination option: where swept deposits go. One reader for every face (the JSON
//! configuration, the C face's `set_destination`, Python's dicts and objects) and one resolver
//! that checks it against the chains and fills in its defaults.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::chains::{AddressType, Chain};
use crate::describe::quote;
use crate::error::{Error, Result};
use crate::tokens::{DEFAULT_SUPPORTED_TOKENS, TokenType, is_supported_destination_token};
use crate::validate::{evm_address_problem, solana_address_problem};

use super::option::{OptionError, OptionKind, token_from_json};
pub use crate::deposit::model::Destination;

/// Where swept deposits go, as the host gives it (spec §2 `DestinationConfig`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DestinationConfig {
    /// One of the destination chains (Ethereum, Base, Arbitrum, BNB Chain, Solana).
    pub chain_id: u64,
    /// The receiving address; default the owner address (which only an EVM chain accepts).
    #[serde(default)]
    pub address: Option<String>,
    /// The delivered token; default USDC. Must be deliverable on the chain.
    #[serde(default)]
    pub token: Option<TokenType>,
}

impl DestinationConfig {
    /// USDC to the owner address on `chain_id`.
    pub fn chain(chain_id: u64) -> Self {
        DestinationConfig { chain_id, address: None, token: None }
    }

    /// With an explicit address.
    pub fn with_address(mut self, address: impl Into<String>) -> Self {
        self.address = Some(address.into());
        self
    }

    /// With an explicit token.
    pub fn with_token(mut self, token: TokenType) -> Self {
        self.token = Some(token);
        self
    }
}

impl DestinationConfig {
    /// The keys of a destination object, their spec names and shapes (Python converts its
    /// arguments by them before [`DestinationConfig::from_json_value`] reads them).
    pub const FIELDS: [(&'static str, &'static str, OptionKind); 3] = [
        ("chain_id", "chainId", OptionKind::Integer),
        ("address", "address", OptionKind::Text),
        ("token", "token", OptionKind::Token),
    ];

    /// Reads a destination object `{"chainId": 42161, "address": "0x…", "token": "usdt"}`:
    /// `address` and `token` optional (`null` too), `token` in any letter case. Whether the
    /// chain, address and token go together is [`resolve_destination`]'s question.
    ///
    /// # Errors
    /// [`OptionError`] naming `destination` or its key: not an object, an unknown key, a
    /// missing `chainId`, a value of the wrong type, an unknown token symbol.
    pub fn from_json_value(value: Value) -> std::result::Result<Self, OptionError> {
        let Value::Object(fields) = value else {
            return Err(OptionError::wrong_type(
                "destination",
                "an object {\"chainId\": ..., \"address\": ..., \"token\": ...}",
                &value,
            ));
        };
        Self::from_fields(fields)
    }

    fn from_fields(mut fields: Map<String, Value>) -> std::result::Result<Self, OptionError> {
        if let Some(unknown) =
            fields.keys().find(|k| !Self::FIELDS.iter().any(|(_, name, _)| name == k))
        {
            return Err(OptionError::value(format!(
                "destination has an unknown key {}: expected chainId, address and token",
                quote(unknown)
            )));
        }
        let mut take = |key: &str| fields.remove(key).filter(|v| !v.is_null());
        let chain_id = match take("chainId") {
            None => return Err(OptionError::value("destination.chainId is required".to_owned())),
            Some(Value::Number(n)) => n.as_u64().ok_or_else(|| {
                OptionError::value(format!(
                    "Invalid destination chain ID: {n}. Use a chain from the CHAIN constant."
                ))
            })?,
            Some(other) => {
                return Err(OptionError::wrong_type(
                    "destination.chainId",
                    "a chain id (an integer)",
                    &other,
                ));
            }
        };
        let address = match take("address") {
            None => None,
            Some(Value::String(text)) => Some(text),
            Some(other) => {
                return Err(OptionError::wrong_type("destination.address", "a string", &other));
            }
        };
        let token = take("token").map(|t| token_from_json("destination.token", &t)).transpose()?;
        Ok(DestinationConfig { chain_id, address, token })
    }
}

/// The destination chains, for messages.
pub(crate) fn destination_chains() -> String {
    Chain::ALL
        .iter()
        .filter(|c| c.is_destination())
        .map(|c| format!("{} ({})", c.name(), c.id()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Validates `config` and fills in its defaults (`address`: `owner`; `token`: USDC).
///
/// # Errors
/// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) for an unknown chain, a chain
/// that cannot be a destination (X Layer among them), an address invalid for the chain's type,
/// or a token not deliverable on the chain.
pub fn resolve_destination(config: &DestinationConfig, owner: &str) -> Result<Destination> {
    let chain_id = config.chain_id;
    let Some(chain) = Chain::from_id(chain_id) else {
        return Err(Error::configuration(format!(
            "Invalid destination chain ID: {chain_id}. Use a chain from the CHAIN constant."
        )));
    };
    if chain == Chain::XLAYER {
        return Err(Error::configuration(format!(
            "destination.chainId {chain_id}: X Layer is a deposit source only and cannot be a destination. Destination chains: {}.",
            destination_chains()
        )));
    }
    if !chain.is_destination() {
        return Err(Error::configuration(format!(
            "destination.chainId {chain_id}: {} cannot be a destination. Destination chains: {}.",
            chain.name(),
            destination_chains()
        )));
    }
    let (address, defaulted) = match &config.address {
        Some(address) => (address.as_str(), false),
        None => (owner, true),
    };
    let address = match chain.address_type() {
        AddressType::Solana => {
            if let Some(reason) = solana_address_problem(address) {
                let hint = if defaulted {
                    "; the default is the owner's EVM address, so a Solana destination needs destination.address"
                } else {
                    ""
                };
                return Err(Error::configuration(format!(
                    "Invalid Solana address format for destination on {}: {} ({reason}{hint})",
                    chain.name(),
                    quote(address)
                )));
            }
            address.to_owned()
        }
        AddressType::Evm => {
            if let Some(reason) = evm_address_problem(address) {
                return Err(Error::configuration(format!(
                    "Invalid EVM address format for destination on {}: {} ({reason})",
                    chain.name(),
                    quote(address)
                )));
            }
            address.to_ascii_lowercase()
        }
    };
    let token = config.token.unwrap_or(TokenType::USDC);
    if !is_supported_destination_token(token, chain_id) {
        let deliverable: Vec<&str> = DEFAULT_SUPPORTED_TOKENS
            .iter()
            .filter(|t| is_supported_destination_token(**t, chain_id))
            .map(|t| t.symbol())
            .collect();
        return Err(Error::configuration(format!(
            "destination.token {token} cannot be delivered on {} ({chain_id}); deliverable there: {}",
            chain.name(),
            deliverable.join(", ")
        )));
    }
    Ok(Destination { chain_id, address, token })
}
