//! Fund-from-wallet's records (`docs/funding.md` §3–4): `FundingBalance` and
//! `FundingTransferResult`.
//!
//! `FundingBalance` has no constructor: only `get_wallet_balances()` makes one, and only the
//! client that made it accepts it back (the core checks; another client's balance is an
//! `InvalidArgumentError`).

use depositkit_core::funding::{FundingBalance, FundingTransferResult};
use pyo3::prelude::*;

use super::py_repr;
use crate::conversions::u256_to_py;

py_record! {
    /// One balance of a funding wallet (spec §2 ``FundingBalance``), offered by
    /// ``DepositClient.get_wallet_balances()``. Immutable and opaque: there is no public
    /// constructor (``FundingBalance()`` raises ``TypeError``), and only the client that issued it
    /// accepts it back in ``fund_from_wallet``.
    ///
    /// ``repr()`` is
    /// ``<depositkit.FundingBalance 25 USDC on chain 8453 wallet='0x…' source='rpc'>``.
    class "FundingBalance" as PyFundingBalance(FundingBalance);
    repr |b, py| {
        Ok(format!(
            "<depositkit.FundingBalance {} {} on chain {} wallet={} source={}>",
            b.amount(),
            b.token().symbol(),
            b.chain_id(),
            py_repr(py, b.wallet_address())?,
            py_repr(py, b.source().as_str())?
        ))
    }
    getters {
        /// The chain (Ethereum, BNB Chain, Base, Arbitrum or Solana).
        chain_id: "int" = |b| -> u64 { b.chain_id() };
        /// The token's symbol.
        token: "str" = |b| -> &'static str { b.token().symbol() };
        /// The token's contract (EVM, EIP-55) or mint (Solana); ``None`` for the chain's native
        /// asset.
        token_address: "Optional[str]" = |b| -> Option<&str> { b.token_address() };
        /// Whether this is the chain's native asset (ETH, BNB, SOL).
        is_native: "bool" = |b| -> bool { b.is_native() };
        /// The token's decimals on this chain.
        decimals: "int" = |b| -> u8 { b.decimals() };
        /// The balance in smallest units.
        raw_amount: "int" = |b, py| -> PyResult<Bound<'py, PyAny>> {
            u256_to_py(py, b.raw_amount())
        };
        /// The balance, human-readable (``"25.5"``).
        amount: "str" = |b| -> &str { b.amount() };
        /// The token's USD price, when the source priced it.
        price_usd: "Optional[float]" = |b| -> Option<f64> { b.price_usd() };
        /// The balance's USD value, when the source priced it.
        value_usd: "Optional[float]" = |b| -> Option<f64> { b.value_usd() };
        /// The funding wallet holding it (EVM EIP-55 checksummed, Solana base58).
        wallet_address: "str" = |b| -> &str { b.wallet_address() };
        /// Where the balance was read.
        source: "_BalanceSourceName" = |b| -> &'static str { b.source().as_str() };
    }
    methods {
        /// The JSON form of ``docs/funding.md`` §6: ``chainId``, ``token``, ``tokenAddress``,
        /// ``decimals``, ``rawAmount`` (an ``int``), ``priceUSD``, ``valueUSD``, ``amount``,
        /// ``walletAddress``, ``source``. It cannot be turned back into a ``FundingBalance``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// A transfer ``DepositClient.fund_from_wallet()`` made (spec §2
    /// ``FundingTransferResult``), mined (EVM) or confirmed (Solana). The watcher then detects it
    /// as a deposit. Immutable.
    ///
    /// ``repr()`` is ``<depositkit.FundingTransferResult 25 USDC on chain 8453 tx_hash='0x…'>``.
    class "FundingTransferResult" as PyFundingTransferResult(FundingTransferResult);
    repr |t, py| {
        Ok(format!(
            "<depositkit.FundingTransferResult {} {} on chain {} tx_hash={}>",
            t.amount,
            t.token.symbol(),
            t.chain_id,
            py_repr(py, &t.tx_hash)?
        ))
    }
    getters {
        /// The transaction: a ``0x`` hash (EVM) or a base58 signature (Solana).
        tx_hash: "str" = |t| -> &str { &t.tx_hash };
        /// The chain it was sent on.
        chain_id: "int" = |t| -> u64 { t.chain_id };
        /// The token sent.
        token: "str" = |t| -> &'static str { t.token.symbol() };
        /// The amount sent, in smallest units.
        raw_amount: "int" = |t, py| -> PyResult<Bound<'py, PyAny>> {
            u256_to_py(py, t.raw_amount)
        };
        /// The amount sent, human-readable.
        amount: "str" = |t| -> &str { &t.amount };
        /// The funding wallet.
        from_address: "str" = |t| -> &str { &t.from };
        /// The deposit address that received it.
        to_address: "str" = |t| -> &str { &t.to };
    }
    methods {
        /// The spec's record, camelCase: ``txHash``, ``chainId``, ``token``, ``rawAmount`` (an
        /// ``int``), ``amount``, ``from``, ``to``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}
