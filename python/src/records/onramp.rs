//! The fiat onramp's record and events (`docs/funding.md` §5): `OnrampOrder`, `OnrampEvent`
//! (`onramp:<name>`) and `OnrampCompleteEvent` (`onramp:complete`).

use depositkit_core::onramp::{OnrampEventName, OnrampOrder};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use super::{destination_dict, py_repr};
use crate::conversions::json_to_py;

/// A message of the onramp overlay: the event's name and its `data`.
#[derive(PartialEq)]
pub(crate) struct OnrampMessage {
    pub(crate) name: OnrampEventName,
    pub(crate) payload: Value,
}

py_record! {
    /// A completed fiat-onramp order (spec §2 ``OnrampOrder``): what ``onramp:complete``
    /// carries and ``DepositClient.last_onramp_order`` keeps, read from the widget's order
    /// (``cryptoAmount``, ``cryptoCurrency``, ``status``, ``id``, ``walletAddress``, ``network``,
    /// ``fiatAmount``, ``fiatCurrency``, ``txHash``). Immutable.
    ///
    /// ``repr()`` is ``<depositkit.OnrampOrder id='ord_…' 99 USDC to '0x…' on chain 8453
    /// status='completed'>``.
    class "OnrampOrder" as PyOnrampOrder(OnrampOrder);
    repr |o, py| {
        Ok(format!(
            "<depositkit.OnrampOrder id={} {} {} to {} on chain {} status={}>",
            py_repr(py, &o.id)?,
            o.amount,
            o.token.symbol(),
            py_repr(py, &o.destination.address)?,
            o.destination.chain_id,
            py_repr(py, &o.status)?
        ))
    }
    getters {
        /// The crypto delivered, human-readable (the order's ``cryptoAmount``).
        amount: "str" = |o| -> &str { &o.amount };
        /// The token delivered (``cryptoCurrency``).
        token: "str" = |o| -> &'static str { o.token.symbol() };
        /// The provider's order status (``"completed"``).
        status: "str" = |o| -> &str { &o.status };
        /// The provider's order id.
        id: "str" = |o| -> &str { &o.id };
        /// Where the crypto went: ``{"address", "chain_id"}`` (``walletAddress`` on
        /// ``network``).
        destination: "_EventDestinationDict" = |o, py| -> PyResult<Bound<'py, PyDict>> {
            destination_dict(py, &o.destination.address, o.destination.chain_id, None)
        };
        /// The fiat amount paid, when reported.
        fiat_amount: "Optional[float]" = |o| -> Option<f64> { o.fiat_amount };
        /// The fiat currency paid in, when reported.
        fiat_currency: "Optional[str]" = |o| -> Option<&str> { o.fiat_currency.as_deref() };
        /// The delivering transaction, when the provider reports it.
        tx_hash: "Optional[str]" = |o| -> Option<&str> { o.tx_hash.as_deref() };
    }
    methods {
        /// The spec's record, camelCase: ``amount``, ``token``, ``status``, ``id``,
        /// ``destination`` (``{"address", "chainId"}``), ``fiatAmount``, ``fiatCurrency``,
        /// ``txHash``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// A message of the onramp overlay, forwarded with ``DepositClient.handle_onramp_message``
    /// (the ``onramp:<name>`` events: ``onramp:widget_opened``, ``onramp:order_created``,
    /// ``onramp:order_processing``, ``onramp:order_completed``, ``onramp:order_failed``,
    /// ``onramp:widget_closed``). Immutable.
    ///
    /// ``repr()`` is ``<depositkit.OnrampEvent onramp:order_created order='ord_…'>``.
    class "OnrampEvent" as PyOnrampEvent(OnrampMessage);
    repr |e, py| {
        let name = e.name.type_name();
        Ok(match e.payload.get("id").and_then(Value::as_str) {
            Some(id) => format!("<depositkit.OnrampEvent {name} order={}>", py_repr(py, id)?),
            None => format!("<depositkit.OnrampEvent {name}>"),
        })
    }
    getters {
        /// The event's type: ``"onramp:"`` followed by ``name``.
        r#type: "str" = |e| -> &'static str { e.name.type_name() };
        /// The widget's event name.
        name: "_OnrampEventName" = |e| -> &'static str { e.name.as_str() };
        /// The message's ``data`` (the widget's order object), as the widget posted it (a new
        /// copy each time); ``{}`` when the message had none.
        payload: "Any" = |e, py| -> PyResult<Bound<'py, PyAny>> {
            json_to_py(py, &e.payload)
        };
    }
    methods {
        /// The event's JSON form: ``{"type": "onramp:<name>", "payload": {...}}``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = |e, py| -> PyResult<Bound<'py, PyDict>> {
            let dict = PyDict::new(py);
            dict.set_item(intern!(py, "type"), e.name.type_name())?;
            dict.set_item(intern!(py, "payload"), json_to_py(py, &e.payload)?)?;
            Ok(dict)
        };
    }
}

py_record! {
    /// An onramp order completed (the ``onramp:complete`` event), right after its
    /// ``onramp:order_completed``. Immutable.
    ///
    /// ``repr()`` is ``<depositkit.OnrampCompleteEvent order='ord_…' 99 USDC>``.
    class "OnrampCompleteEvent" as PyOnrampCompleteEvent(OnrampOrder);
    repr |o, py| {
        Ok(format!(
            "<depositkit.OnrampCompleteEvent order={} {} {}>",
            py_repr(py, &o.id)?,
            o.amount,
            o.token.symbol()
        ))
    }
    getters {
        /// The event's type.
        r#type: r#"Literal["onramp:complete"]"# = |_o| -> &'static str { "onramp:complete" };
        /// The completed order (also ``DepositClient.last_onramp_order``).
        order: "OnrampOrder" = |o| -> PyOnrampOrder { PyOnrampOrder::from(o.clone()) };
    }
    methods {
        /// The order's record: ``order.to_dict()``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}
