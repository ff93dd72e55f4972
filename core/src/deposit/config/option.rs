//! How one construction option is declared, read and described — the machinery behind the one
//! option table ([`super::options`]).
//!
//! An option is declared once with [`deposit_options!`]: its Rust field, its builder method, its
//! spec name (camelCase: JSON, C, messages), its [`OptionKind`], its default, its own check and
//! its documentation. From that one declaration come the field of
//! [`DepositClientConfig`](super::DepositClientConfig), its default in `new`, the builder method,
//! and an [`OptionSpec`] in [`OPTIONS`](super::OPTIONS), which every face reads: the JSON reader
//! (and so the C face), the Python keyword arguments, and the generated Python stub and reference
//! documentation (`core/tests/option_table.rs`).

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::describe::{json_kind, quote};
use crate::error::{Error, Result};
use crate::tokens::TokenType;

use super::nested::NotificationsConfig;

/// The shape of an option's value, as every face writes it. Python converts its arguments by
/// this; the documentation shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// A whole number (JSON number, Python `int`).
    Integer,
    /// Any finite number (Python `int`, `float` or `decimal.Decimal`).
    Number,
    /// `true`/`false`.
    Bool,
    /// A string.
    Text,
    /// A file path (Python also takes an `os.PathLike`).
    Path,
    /// A token symbol, any letter case (Python also takes a `TokenType`).
    Token,
    /// A list of token symbols, any letter case.
    Tokens,
    /// A list of chain ids.
    Chains,
    /// An object of settings (Python: a dict, keys snake_case or camelCase).
    Object,
    /// `true` for the defaults, `false` for off, or an object of settings.
    ObjectOrBool,
}

impl OptionKind {
    /// The value's type in the Python stub (always also `None`: the default).
    pub fn python_type(self) -> &'static str {
        match self {
            OptionKind::Integer => "int",
            OptionKind::Number => "Union[float, int, decimal.Decimal]",
            OptionKind::Bool => "bool",
            OptionKind::Text | OptionKind::Token => "str",
            OptionKind::Path => "Union[str, \"os.PathLike[str]\"]",
            OptionKind::Tokens => "Sequence[str]",
            OptionKind::Chains => "Sequence[int]",
            OptionKind::Object => "Mapping[str, Any]",
            OptionKind::ObjectOrBool => "Union[bool, Mapping[str, Any]]",
        }
    }

    /// The value's type in JSON (the C face), for the reference documentation.
    pub fn json_type(self) -> &'static str {
        match self {
            OptionKind::Integer => "integer",
            OptionKind::Number => "number",
            OptionKind::Bool => "boolean",
            OptionKind::Text | OptionKind::Path => "string",
            OptionKind::Token => "token symbol",
            OptionKind::Tokens => "array of token symbols",
            OptionKind::Chains => "array of chain ids",
            OptionKind::Object => "object",
            OptionKind::ObjectOrBool => "boolean or object",
        }
    }
}

/// Why a value could not be taken for an option: its type is wrong (Python raises a
/// `ConfigurationTypeError`, also a `TypeError`) or the value is (a `ConfigurationError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError {
    /// The message, naming the option by its spec name.
    pub message: String,
    /// The value has the wrong type (not merely a bad value).
    pub wrong_type: bool,
}

impl OptionError {
    pub(crate) fn wrong_type(name: &str, expected: &str, value: &Value) -> Self {
        OptionError {
            message: format!("{name} must be {expected}, got {}", json_kind(value)),
            wrong_type: true,
        }
    }

    pub(crate) fn value(message: String) -> Self {
        OptionError { message, wrong_type: false }
    }
}

impl From<OptionError> for Error {
    fn from(e: OptionError) -> Self {
        Error::configuration(e.message)
    }
}

/// One declared option, as the faces read it.
pub struct OptionSpec {
    /// The Rust field, also the Python keyword (`polling_interval_ms`).
    pub field: &'static str,
    /// The Rust builder method (`with_polling_interval_ms`).
    pub builder: &'static str,
    /// The spec name: JSON and C key, and the name in every core message (`pollingIntervalMs`).
    pub name: &'static str,
    /// The shape of its value.
    pub kind: OptionKind,
    /// Its documentation (Markdown; options named by their Rust field in backticks).
    pub doc: &'static str,
    pub(crate) set:
        fn(&mut super::DepositClientConfig, Value) -> std::result::Result<(), OptionError>,
    pub(crate) check: fn(&super::DepositClientConfig) -> Result<()>,
    pub(crate) default: fn(&super::DepositClientConfig) -> Value,
}

impl std::fmt::Debug for OptionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptionSpec")
            .field("field", &self.field)
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl OptionSpec {
    /// Sets this option of `config` from a JSON value (`null` keeps the default). A wrong type
    /// or a value the field cannot hold is refused; the option's own rules are checked by
    /// [`DepositClientConfig::validate`](super::DepositClientConfig::validate).
    ///
    /// # Errors
    /// [`OptionError`] naming the option by its spec name.
    pub fn set(
        &self,
        config: &mut super::DepositClientConfig,
        value: Value,
    ) -> std::result::Result<(), OptionError> {
        if value.is_null() {
            return Ok(());
        }
        (self.set)(config, value)
    }

    /// The default value, as JSON (`null` when the option is unset by default).
    pub fn default_value(&self) -> Value {
        let defaults = super::DepositClientConfig::new(
            String::new(),
            super::destination::DestinationConfig::chain(0),
        );
        (self.default)(&defaults)
    }
}

/// A field type an option can have: read from JSON, shown as JSON.
pub(crate) trait OptionValue: Sized {
    fn from_json(name: &str, value: Value) -> std::result::Result<Self, OptionError>;
    fn to_json(&self) -> Value;
}

/// What a builder method accepts for a field of type `T`: `&str` for text options, any iterable
/// for lists, the settings struct for nested options.
pub trait OptionArg<T> {
    /// The field's value.
    fn into_option(self) -> T;
}

macro_rules! plain_arg {
    ($($ty:ty),*) => { $(impl OptionArg<$ty> for $ty { fn into_option(self) -> $ty { self } })* };
}
plain_arg!(u64, u32, usize, f64, bool);

impl<A: Into<String>> OptionArg<Option<String>> for A {
    fn into_option(self) -> Option<String> {
        Some(self.into())
    }
}

impl<I: IntoIterator<Item = TokenType>> OptionArg<Vec<TokenType>> for I {
    fn into_option(self) -> Vec<TokenType> {
        self.into_iter().collect()
    }
}

impl<I: IntoIterator<Item = u64>> OptionArg<Vec<u64>> for I {
    fn into_option(self) -> Vec<u64> {
        self.into_iter().collect()
    }
}

impl OptionArg<Option<NotificationsConfig>> for NotificationsConfig {
    fn into_option(self) -> Option<NotificationsConfig> {
        Some(self)
    }
}

fn unsigned<T: TryFrom<u64>>(
    name: &str,
    value: &Value,
    max: u64,
) -> std::result::Result<T, OptionError> {
    let Value::Number(n) = value else {
        return Err(OptionError::wrong_type(name, "an integer", value));
    };
    n.as_u64().filter(|v| *v <= max).and_then(|v| T::try_from(v).ok()).ok_or_else(|| {
        let range = if max == u64::MAX {
            "a non-negative integer".to_owned()
        } else {
            format!("an integer from 0 to {max}")
        };
        OptionError::value(format!("{name} must be {range}, got {n}"))
    })
}

macro_rules! unsigned_value {
    ($($ty:ty),*) => {$(
        impl OptionValue for $ty {
            fn from_json(name: &str, value: Value) -> std::result::Result<Self, OptionError> {
                unsigned(name, &value, <$ty>::MAX as u64)
            }
            fn to_json(&self) -> Value {
                Value::from(*self)
            }
        }
    )*};
}
unsigned_value!(u64, u32, usize);

impl OptionValue for f64 {
    fn from_json(name: &str, value: Value) -> std::result::Result<Self, OptionError> {
        value.as_f64().ok_or_else(|| OptionError::wrong_type(name, "a number", &value))
    }
    fn to_json(&self) -> Value {
        serde_json::Number::from_f64(*self).map_or(Value::Null, Value::Number)
    }
}

impl OptionValue for bool {
    fn from_json(name: &str, value: Value) -> std::result::Result<Self, OptionError> {
        value.as_bool().ok_or_else(|| OptionError::wrong_type(name, "true or false", &value))
    }
    fn to_json(&self) -> Value {
        Value::Bool(*self)
    }
}

impl OptionValue for Option<String> {
    fn from_json(name: &str, value: Value) -> std::result::Result<Self, OptionError> {
        match value {
            Value::String(text) => Ok(Some(text)),
            other => Err(OptionError::wrong_type(name, "a string", &other)),
        }
    }
    fn to_json(&self) -> Value {
        self.as_ref().map_or(Value::Null, |text| Value::String(text.clone()))
    }
}

/// The spec's token symbols, for messages.
pub(crate) const TOKEN_SYMBOLS: &str = "ETH, USDC, USDT, BTC, SOL, BNB";

/// A token symbol in any letter case.
pub(crate) fn token_from_json(
    name: &str,
    value: &Value,
) -> std::result::Result<TokenType, OptionError> {
    let Value::String(text) = value else {
        return Err(OptionError::wrong_type(name, "a token symbol (a string)", value));
    };
    text.parse::<TokenType>().map_err(|_| {
        OptionError::value(format!("{name} must be one of {TOKEN_SYMBOLS}, got {}", quote(text)))
    })
}

fn array(name: &str, what: &str, value: Value) -> std::result::Result<Vec<Value>, OptionError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(OptionError::wrong_type(name, &format!("an array of {what}"), &other)),
    }
}

impl OptionValue for Vec<TokenType> {
    fn from_json(name: &str, value: Value) -> std::result::Result<Self, OptionError> {
        array(name, "token symbols", value)?.iter().map(|t| token_from_json(name, t)).collect()
    }
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(|t| Value::from(t.symbol())).collect())
    }
}

impl OptionValue for Vec<u64> {
    fn from_json(name: &str, value: Value) -> std::result::Result<Self, OptionError> {
        array(name, "chain ids", value)?
            .into_iter()
            .map(|item| match &item {
                Value::Number(n) => n.as_u64().ok_or_else(|| {
                    OptionError::value(format!(
                        "{name} contains an unknown chain ID: {n}. Use chains from the CHAIN constant."
                    ))
                }),
                other => Err(OptionError::wrong_type(
                    name,
                    "an array of chain ids (integers), and holds",
                    other,
                )),
            })
            .collect()
    }
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(|id| Value::from(*id)).collect())
    }
}

/// A settings object read by its own deserializer: unknown keys and wrong types are refused.
pub(crate) fn object_from_json<T: DeserializeOwned>(
    name: &str,
    value: Value,
) -> std::result::Result<T, OptionError> {
    if !value.is_object() {
        return Err(OptionError::wrong_type(name, "an object", &value));
    }
    serde_json::from_value(value).map_err(|e| OptionError {
        // serde says "invalid type: …" for a value of the wrong JSON type.
        wrong_type: e.to_string().starts_with("invalid type"),
        message: format!("invalid {name}: {e}"),
    })
}

macro_rules! object_value {
    ($($ty:ty),*) => {$(
        impl OptionValue for $ty {
            fn from_json(name: &str, value: Value) -> std::result::Result<Self, OptionError> {
                object_from_json(name, value)
            }
            fn to_json(&self) -> Value {
                serde_json::to_value(self).unwrap_or(Value::Null)
            }
        }
        impl OptionArg<$ty> for $ty {
            fn into_option(self) -> $ty {
                self
            }
        }
    )*};
}
object_value!(
    super::nested::RefundConfig,
    super::nested::FundingConfig,
    super::nested::OnrampConfig,
    super::backend::ParticleOptions,
    super::chain_watch::ChainRpcUrls,
    crate::deposit::finality::FinalityConfig
);

impl OptionValue for Option<NotificationsConfig> {
    fn from_json(name: &str, value: Value) -> std::result::Result<Self, OptionError> {
        match value {
            Value::Bool(on) => Ok(on.then(NotificationsConfig::default)),
            other => object_from_json(name, other).map(Some),
        }
    }
    fn to_json(&self) -> Value {
        self.as_ref().map_or(Value::Bool(false), |n| serde_json::to_value(n).unwrap_or(Value::Null))
    }
}

/// Keys of the nested settings objects and of the destination, as the spec spells them: the
/// faces that spell names otherwise (Python's snake_case) rename these in messages too.
pub const NESTED_OPTION_NAMES: &[&str] = &[
    "chainId",
    "delayMs",
    "maxAttempts",
    "refundToSender",
    "durationMs",
    "className",
    "apiKey",
    "proxyUrl",
    "evmRpcUrls",
    "solanaRpcUrl",
    "fiatCurrency",
    "defaultFiatAmount",
    "paymentMode",
    "widgetUrl",
    "balanceProvider",
    "balanceApiUrl",
    "minValueUSD",
    "rpcUrl",
    "projectId",
    "clientKey",
    "signerKey",
    "signerSeed",
    "instantBelowUsd",
    "balanceFallbackMs",
];

/// Declares every option once; see the module's documentation. Each entry:
///
/// ```text
/// /// doc
/// field / with_field: Type = default, "specName", Kind, check |name, value| -> Result<()>;
/// ```
macro_rules! deposit_options {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident / $builder:ident : $ty:ty = $default:expr, $name:literal, $kind:ident,
        check $check:expr;
    )*) => {
        /// Every construction option of the deposit client (spec §4), with the spec's defaults.
        ///
        /// Build one with [`DepositClientConfig::new`] and the `with_*` methods, set fields
        /// directly, or read JSON with [`DepositClientConfig::from_json`]. The options are
        /// declared once, in `core/src/deposit/config/options.rs`; `docs/options.md` lists them
        /// for every language.
        #[derive(Clone)]
        pub struct DepositClientConfig {
            /// The owner of the unified account: an EVM address (required).
            pub owner_address: String,
            /// Where swept deposits go (required).
            pub destination: DestinationConfig,
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
            /// Headless callback for lifecycle events (spec §4 `onDepositEvent`).
            pub on_deposit_event: Option<LifecycleCallback>,
            /// A signer source the host provides (a KMS callback): overrides the signer
            /// options. Set with [`DepositClientConfig::with_signer_source`]; not an option of
            /// the table (a JSON value cannot hold it).
            pub signer_source: Option<std::sync::Arc<dyn crate::signer::SignerSource>>,
        }

        impl DepositClientConfig {
            /// The defaults for `owner_address`, delivering USDC to the owner on `destination`.
            pub fn new(owner_address: impl Into<String>, destination: DestinationConfig) -> Self {
                DepositClientConfig {
                    owner_address: owner_address.into(),
                    destination,
                    $($field: $default,)*
                    on_deposit_event: None,
                    signer_source: None,
                }
            }

            $(
                $(#[doc = $doc])*
                #[must_use]
                pub fn $builder(mut self, value: impl OptionArg<$ty>) -> Self {
                    self.$field = value.into_option();
                    self
                }
            )*

            /// Each option's own check, in declaration order.
            pub(super) fn check_options(&self) -> Result<()> {
                for spec in OPTIONS {
                    (spec.check)(self)?;
                }
                Ok(())
            }
        }

        /// Every option but the owner, the destination and the callback, in declaration order.
        pub static OPTIONS: &[OptionSpec] = &[$(
            OptionSpec {
                field: stringify!($field),
                builder: stringify!($builder),
                name: $name,
                kind: OptionKind::$kind,
                doc: concat!($($doc, "\n"),*),
                set: |config, value| {
                    config.$field = <$ty as OptionValue>::from_json($name, value)?;
                    Ok(())
                },
                check: |config| {
                    let check: fn(&str, &$ty) -> Result<()> = $check;
                    check($name, &config.$field)
                },
                default: |config| <$ty as OptionValue>::to_json(&config.$field),
            },
        )*];
    };
}
pub(crate) use deposit_options;
