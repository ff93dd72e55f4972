//! The user-lookup service's records (spec §2): `User` and `Wallet`, as `UserRpcClient` returns
//! them. Both are hashable; `User` hashes its identifying fields only (equal records have equal
//! hashes, which is all `hash` promises).

use depositkit_core as core;
use depositkit_core::describe::quote;
use depositkit_core::{Error, ErrorKind};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use super::py_repr;
use crate::conversions::json_to_py;
use crate::errors::to_py_err;

py_record! {
    /// A registered user's profile record (spec §2), as ``getUserInfo`` and
    /// ``getUserInfoByIdentity`` return it. Immutable; equal when every field is equal, and
    /// hashable. Created by ``UserRpcClient`` only.
    ///
    /// The attributes are the spec's fields in snake_case. Which provider fields (``google_id``,
    /// ``apple_email``, ...) hold a value depends on the user's social accounts; the others are
    /// ``None``. ``repr()`` is ``<depositkit.User uuid='…' email='…'>``.
    class "User" as PyUser(core::User)
        hash by |u| (&u.uuid, &u.email, &u.created_at, &u.updated_at);
    repr |u, py| {
        Ok(format!(
            "<depositkit.User uuid={} email={}>",
            py_repr(py, &u.uuid)?,
            py_repr(py, &u.email)?
        ))
    }
    getters {
        /// The user's UUID.
        uuid: "str" = |u| -> &str { &u.uuid };
        /// Phone number, or ``None``.
        phone: "Optional[str]" = |u| -> Option<&str> { u.phone.as_deref() };
        /// E-mail address (always present).
        email: "str" = |u| -> &str { &u.email };
        /// Display name, or ``None``.
        name: "Optional[str]" = |u| -> Option<&str> { u.name.as_deref() };
        /// Avatar URL, or ``None``.
        avatar: "Optional[str]" = |u| -> Option<&str> { u.avatar.as_deref() };
        /// ``facebookId``, or ``None``.
        facebook_id: "Optional[str]" = |u| -> Option<&str> { u.facebook_id.as_deref() };
        /// ``facebookEmail``, or ``None``.
        facebook_email: "Optional[str]" = |u| -> Option<&str> { u.facebook_email.as_deref() };
        /// ``googleId``, or ``None``.
        google_id: "Optional[str]" = |u| -> Option<&str> { u.google_id.as_deref() };
        /// ``googleEmail``, or ``None``.
        google_email: "Optional[str]" = |u| -> Option<&str> { u.google_email.as_deref() };
        /// ``appleId``, or ``None``.
        apple_id: "Optional[str]" = |u| -> Option<&str> { u.apple_id.as_deref() };
        /// ``appleEmail``, or ``None``.
        apple_email: "Optional[str]" = |u| -> Option<&str> { u.apple_email.as_deref() };
        /// ``twitterId``, or ``None``.
        twitter_id: "Optional[str]" = |u| -> Option<&str> { u.twitter_id.as_deref() };
        /// ``twitterEmail``, or ``None``.
        twitter_email: "Optional[str]" = |u| -> Option<&str> { u.twitter_email.as_deref() };
        /// ``telegramId``, or ``None``.
        telegram_id: "Optional[str]" = |u| -> Option<&str> { u.telegram_id.as_deref() };
        /// ``telegramPhone`` (the telegram record carries a phone, not an e-mail), or ``None``.
        telegram_phone: "Optional[str]" = |u| -> Option<&str> { u.telegram_phone.as_deref() };
        /// ``discordId``, or ``None``.
        discord_id: "Optional[str]" = |u| -> Option<&str> { u.discord_id.as_deref() };
        /// ``discordEmail``, or ``None``.
        discord_email: "Optional[str]" = |u| -> Option<&str> { u.discord_email.as_deref() };
        /// ``githubId``, or ``None``.
        github_id: "Optional[str]" = |u| -> Option<&str> { u.github_id.as_deref() };
        /// ``githubEmail``, or ``None``.
        github_email: "Optional[str]" = |u| -> Option<&str> { u.github_email.as_deref() };
        /// ``twitchId``, or ``None``.
        twitch_id: "Optional[str]" = |u| -> Option<&str> { u.twitch_id.as_deref() };
        /// ``twitchEmail``, or ``None``.
        twitch_email: "Optional[str]" = |u| -> Option<&str> { u.twitch_email.as_deref() };
        /// ``microsoftId``, or ``None``.
        microsoft_id: "Optional[str]" = |u| -> Option<&str> { u.microsoft_id.as_deref() };
        /// ``microsoftEmail``, or ``None``.
        microsoft_email: "Optional[str]" = |u| -> Option<&str> { u.microsoft_email.as_deref() };
        /// ``linkedinId``, or ``None``.
        linkedin_id: "Optional[str]" = |u| -> Option<&str> { u.linkedin_id.as_deref() };
        /// ``linkedinEmail``, or ``None``.
        linkedin_email: "Optional[str]" = |u| -> Option<&str> { u.linkedin_email.as_deref() };
        /// ``createdAt`` exactly as sent: ISO 8601 UTC with milliseconds
        /// (``"2022-06-08T07:47:54.000Z"``).
        created_at: "str" = |u| -> &str { &u.created_at };
        /// ``updatedAt`` exactly as sent (same format as ``created_at``).
        updated_at: "str" = |u| -> &str { &u.updated_at };
        /// ``created_at`` as an aware ``datetime.datetime`` in UTC (``tzinfo`` is
        /// ``datetime.timezone.utc``), to the microsecond.
        ///
        /// Raises:
        ///     ProtocolError: the timestamp is valid ISO 8601 but outside the years
        ///         ``datetime`` can hold (1 to 9999).
        created_at_datetime: "datetime.datetime" = |u, py| -> PyResult<Bound<'py, PyAny>> {
            let parsed =
                u.created_at_time().map(|t| (t.timestamp(), t.timestamp_subsec_micros()));
            utc_datetime(py, "createdAt", &u.created_at, parsed)
        };
        /// ``updated_at`` as an aware ``datetime.datetime`` in UTC (see
        /// ``created_at_datetime``).
        updated_at_datetime: "datetime.datetime" = |u, py| -> PyResult<Bound<'py, PyAny>> {
            let parsed =
                u.updated_at_time().map(|t| (t.timestamp(), t.timestamp_subsec_micros()));
            utc_datetime(py, "updatedAt", &u.updated_at, parsed)
        };
        /// The user's wallets, in the order the service sent them (a new list on each access).
        wallets: "list[Wallet]" = |u| -> Vec<PyWallet> {
            u.wallets.iter().cloned().map(PyWallet::from).collect()
        };
    }
    methods {
        /// The record as the service sends it: camelCase keys, every key present (``None`` for a
        /// ``null``), ``wallets`` as a list of ``{"chain", "publicAddress"}`` dicts. JSON-ready:
        /// ``json.dumps(user.to_dict())`` is the record on the wire.
        ///
        /// Returns:
        ///     A new ``dict`` (see ``_UserDict``).
        to_dict: "_UserDict" = |u, py| -> PyResult<Bound<'py, PyAny>> {
            json_to_py(py, &u.to_json())
        };
    }
}

py_record! {
    /// A wallet of a ``User`` (spec §2). Immutable; equal when chain and address are equal, and
    /// hashable. Created by ``UserRpcClient`` only.
    ///
    /// ``repr()`` is ``<depositkit.Wallet chain='evm_chain' public_address='0x…'>``.
    class "Wallet" as PyWallet(core::Wallet) hash by |w| (&w.chain, &w.public_address);
    repr |w, py| {
        Ok(format!(
            "<depositkit.Wallet chain={} public_address={}>",
            py_repr(py, &w.chain)?,
            py_repr(py, &w.public_address)?
        ))
    }
    getters {
        /// The chain family, ``"evm_chain"`` or ``"solana"`` (whatever the service sent).
        chain: "str" = |w| -> &str { &w.chain };
        /// The wallet's public address, as the service sent it.
        public_address: "str" = |w| -> &str { &w.public_address };
    }
    methods {
        /// The wallet as the service sends it: ``{"chain": ..., "publicAddress": ...}``.
        ///
        /// Returns:
        ///     A new ``dict`` with the keys ``chain`` and ``publicAddress``.
        to_dict: "_WalletDict" = serde;
    }
}

/// `datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)` and `datetime.timedelta`.
static DATETIME: PyOnceLock<(Py<PyAny>, Py<PyType>)> = PyOnceLock::new();

/// An aware UTC `datetime.datetime` for `field`, whose text `text` parsed to `parsed`
/// (seconds since the epoch and microseconds).
fn utc_datetime<'py>(
    py: Python<'py>,
    field: &str,
    text: &str,
    parsed: Option<(i64, u32)>,
) -> PyResult<Bound<'py, PyAny>> {
    let out_of_range = |why: String| {
        to_py_err(
            py,
            Error::new(
                ErrorKind::Protocol,
                format!("{field} {} cannot be a datetime.datetime: {why}", quote(text)),
            ),
        )
    };
    let Some((seconds, micros)) = parsed else {
        return Err(out_of_range("it is not an ISO 8601 timestamp".to_owned()));
    };
    let (epoch, timedelta) = DATETIME.get_or_try_init(py, || -> PyResult<_> {
        let datetime = py.import(intern!(py, "datetime"))?;
        let utc = datetime.getattr(intern!(py, "timezone"))?.getattr(intern!(py, "utc"))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item(intern!(py, "tzinfo"), utc)?;
        let epoch = datetime.getattr(intern!(py, "datetime"))?.call((1970, 1, 1), Some(&kwargs))?;
        let timedelta = datetime.getattr(intern!(py, "timedelta"))?.cast_into::<PyType>()?;
        Ok((epoch.unbind(), timedelta.unbind()))
    })?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "seconds"), seconds)?;
    kwargs.set_item(intern!(py, "microseconds"), micros)?;
    let delta = timedelta.bind(py).call((), Some(&kwargs))?;
    // Year 0 parses as RFC 3339 but is before datetime.MINYEAR.
    epoch.bind(py).add(delta).map_err(|e| out_of_range(e.to_string()))
}
