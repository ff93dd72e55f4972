//! The account's transaction history (spec §2): `UATransaction`, and the pages of them
//! `TransactionsResponse` and `TokenTransactionsResponse`.
//!
//! The large record `UATransaction` exposes its scalar fields as attributes and its nested
//! objects (`target_token`, `change`, `detail`) as snake_case dicts.

use depositkit_core::deposit::UaTransaction;
use depositkit_core::{TokenTransactionsResponse, TransactionsResponse};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::{py_repr, py_repr_or_none, raw_text_to_py, records_list};

py_record! {
    /// One transaction of the account (spec §2 ``UATransaction``): an incoming deposit (``tag``
    /// ``"receive"``), a sweep (``"sweep"``) or a refund (``"refund"``). Immutable; equal when
    /// every field is equal.
    ///
    /// A large record: its scalar fields are attributes, its nested objects (``target_token``,
    /// ``change``, ``detail``) are snake_case ``dict`` objects built on each access, and
    /// ``to_dict()`` gives the whole spec record in camelCase.
    ///
    /// ``repr()`` is ``<depositkit.UATransaction 'sweep' '0x…' 2.5 USDC on chain 8453 status=1>``.
    class "UATransaction" as PyUaTransaction(UaTransaction);
    repr |t, py| {
        Ok(format!(
            "<depositkit.UATransaction {} {} {} {} on chain {} status={}>",
            py_repr(py, &t.tag)?,
            py_repr(py, &t.transaction_id)?,
            t.change.amount,
            t.target_token.symbol,
            t.target_token.chain_id,
            t.status
        ))
    }
    getters {
        /// The transaction's id (its hash).
        transaction_id: "str" = |t| -> &str { &t.transaction_id };
        /// ``"receive"``, ``"sweep"`` or ``"refund"``.
        tag: "str" = |t| -> &str { &t.tag };
        /// ``1`` success, ``0`` pending, ``-1`` failed.
        status: "int" = |t| -> i64 { t.status };
        /// When it was created, ISO 8601 (as the service sends it).
        created_at: "str" = |t| -> &str { &t.created_at };
        /// When it last changed, ISO 8601.
        updated_at: "str" = |t| -> &str { &t.updated_at };
        /// Source chains.
        from_chains: "list[int]" = |t| -> Vec<u64> { t.from_chains.clone() };
        /// Destination chains.
        to_chains: "list[int]" = |t| -> Vec<u64> { t.to_chains.clone() };
        /// The executed quote, for sweeps and refunds (depositkit's addition).
        quote_id: "Optional[str]" = |t| -> Option<&str> { t.quote_id.as_deref() };
        /// The deposit a sweep or refund moved, when the service knows it (depositkit's
        /// addition).
        deposit_id: "Optional[str]" = |t| -> Option<&str> { t.deposit_id.as_deref() };
        /// The token moved (a new ``dict`` on each access).
        target_token: "_UATargetTokenDict" = |t, py| -> PyResult<Bound<'py, PyDict>> {
            let t = &t.target_token;
            let dict = PyDict::new(py);
            dict.set_item(intern!(py, "name"), &t.name)?;
            dict.set_item(intern!(py, "type"), &t.token_type)?;
            dict.set_item(intern!(py, "image"), &t.image)?;
            dict.set_item(intern!(py, "price"), t.price)?;
            dict.set_item(intern!(py, "symbol"), &t.symbol)?;
            dict.set_item(intern!(py, "address"), &t.address)?;
            dict.set_item(intern!(py, "asset_id"), &t.asset_id)?;
            dict.set_item(intern!(py, "chain_id"), t.chain_id)?;
            dict.set_item(intern!(py, "decimals"), t.decimals)?;
            dict.set_item(intern!(py, "real_decimals"), t.real_decimals)?;
            dict.set_item(intern!(py, "is_primary_token"), t.is_primary_token)?;
            dict.set_item(intern!(py, "is_smart_router_supported"), t.is_smart_router_supported)?;
            Ok(dict)
        };
        /// What moved, from whom to whom (a new ``dict`` on each access).
        change: "_UAChangeDict" = |t, py| -> PyResult<Bound<'py, PyDict>> {
            let c = &t.change;
            let dict = PyDict::new(py);
            dict.set_item(intern!(py, "amount"), &c.amount)?;
            dict.set_item(intern!(py, "amount_in_usd"), &c.amount_in_usd)?;
            dict.set_item(intern!(py, "from"), &c.from)?;
            dict.set_item(intern!(py, "to"), &c.to)?;
            let raw = match c.raw_amount.as_deref() {
                Some(text) => Some(raw_text_to_py(py, text, "the transaction's")?),
                None => None,
            };
            dict.set_item(intern!(py, "raw_amount"), raw)?;
            Ok(dict)
        };
        /// Extra details (a new ``dict`` on each access).
        detail: "_UADetailDict" = |t, py| -> PyResult<Bound<'py, PyDict>> {
            let dict = PyDict::new(py);
            dict.set_item(intern!(py, "red_packet_count"), t.detail.red_packet_count)?;
            Ok(dict)
        };
    }
    methods {
        /// The spec's record, camelCase: ``transactionId``, ``tag``, ``createdAt``,
        /// ``updatedAt``, ``targetToken`` (``name``, ``type``, ``image``, ``price``, ``symbol``,
        /// ``address``, ``assetId``, ``chainId``, ``decimals``, ``realDecimals``,
        /// ``isPrimaryToken``, ``isSmartRouterSupported``), ``change`` (``amount``,
        /// ``amountInUSD``, ``from``, ``to``, and ``rawAmount`` as an ``int`` when known),
        /// ``detail`` (``redPacketCount``), ``status``, ``fromChains``, ``toChains``, and when set
        /// ``quoteId``, ``depositId``. JSON-ready.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// A page of the account's transactions (spec §2 ``TransactionsResponse``), as
    /// ``DepositClient.get_transactions()`` returns it. Immutable. ``len()`` is the number of
    /// transactions on the page.
    class "TransactionsResponse" as PyTransactionsResponse(TransactionsResponse);
    repr |p| {
        Ok(format!(
            "<depositkit.TransactionsResponse page={} page_size={} with {} transactions>",
            p.page,
            p.page_size,
            p.transactions.len()
        ))
    }
    getters {
        /// The page's transactions, newest first (a new list on each access).
        transactions: "list[UATransaction]" = |p, py| -> PyResult<Bound<'py, PyList>> {
            records_list::<_, PyUaTransaction>(py, &p.transactions)
        };
        /// The page number, from 1.
        page: "int" = |p| -> u32 { p.page };
        /// The page size asked for.
        page_size: "int" = |p| -> u32 { p.page_size };
    }
    methods {
        /// ``{"transactions": [UATransaction.to_dict(), ...], "page": ..., "pageSize": ...}``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
        __len__: "int" = |p| -> usize { p.transactions.len() };
    }
}

py_record! {
    /// One page of one token's transactions on one chain (spec §2
    /// ``TokenTransactionsResponse``), as ``DepositClient.get_token_transactions()`` returns it.
    /// Immutable. ``len()`` is the number of transactions on the page.
    class "TokenTransactionsResponse" as PyTokenTransactionsResponse(TokenTransactionsResponse);
    repr |p, py| {
        Ok(format!(
            "<depositkit.TokenTransactionsResponse with {} transactions next_page_token={}>",
            p.transactions.len(),
            py_repr_or_none(py, p.next_page_token.as_deref())?
        ))
    }
    getters {
        /// The page's transactions, newest first (a new list on each access).
        transactions: "list[UATransaction]" = |p, py| -> PyResult<Bound<'py, PyList>> {
            records_list::<_, PyUaTransaction>(py, &p.transactions)
        };
        /// The cursor of the next page (pass it as ``page_token=``); ``None`` on the last
        /// page.
        next_page_token: "Optional[str]" = |p| -> Option<&str> { p.next_page_token.as_deref() };
    }
    methods {
        /// ``{"transactions": [...]}`` plus ``"nextPageToken"`` when there is a next page.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
        __len__: "int" = |p| -> usize { p.transactions.len() };
    }
}
