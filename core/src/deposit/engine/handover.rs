//! The start handed over through the store: what a client learnt when it started (the account,
//! the intermediary wallet and the session JWT) kept for the owner's next client, so that a
//! fleet takeover starts without asking the services again.
//!
//! The next client takes it only when every part checks out, else it starts the full way: the
//! store keeps starts ([`OwnerStore::load_start`](crate::deposit::store_contract::OwnerStore));
//! the account was learnt from this client's account service; the wallet is the one
//! `intermediary_address` expects; and the JWT verifies against the JWT service's keys (the
//! process's cached JWKS, no request while it is fresh) with more than
//! [`HANDOVER_MARGIN_SECS`] left. A session the services then refuse (revoked) is replaced as
//! any other is (`with_session`). The holder keeps the kept session current: every session it
//! fetches (renewals) is saved.
//!
//! The JWT is a secret: it is written to the store and read back, never logged or put in an
//! error.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Inner;
use crate::deposit::model::{DepositAddresses, now_ms};
use crate::deposit::store::contract::StartRow;
use crate::services::jwt::SESSION_REFRESH_MARGIN_SECS;
use crate::services::{AccountInfo, Session};

/// A handed-over session is taken only when more than this many seconds of it remain (twice
/// the margin at which a session is renewed: it is not renewed at once).
pub(crate) const HANDOVER_MARGIN_SECS: u64 = 2 * SESSION_REFRESH_MARGIN_SECS;

/// `StartRow::account`: no secret.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HandedAccount {
    account: AccountInfo,
    wallet: String,
    /// The account service it came from: another service's account is never taken.
    account_service: String,
}

impl StartRow {
    /// The deposit addresses of the account this start holds (what the client's
    /// `deposit_addresses()` gave), or `None` when its account cannot be read (kept by another
    /// version).
    pub fn deposit_addresses(&self) -> Option<DepositAddresses> {
        let handed = serde_json::from_str::<HandedAccount>(&self.account).ok()?;
        Some(DepositAddresses {
            evm: handed.account.evm_address,
            solana: handed.account.solana_address,
        })
    }
}

impl Inner {
    /// The account and wallet an earlier client of this owner handed over with its session,
    /// the session taken: `None` (the full start is needed) unless every part checks out.
    pub(super) async fn take_over(&self) -> Option<(AccountInfo, String)> {
        let store = Arc::clone(self.hub.store());
        let row = match self.runtime.spawn_blocking(move || store.load_start()).await {
            Ok(Ok(Some(row))) => row,
            Ok(Ok(None)) => return None,
            Ok(Err(error)) => {
                tracing::debug!(%error, "the handed-over start could not be read");
                return None;
            }
            Err(error) => {
                tracing::debug!(%error, "reading the handed-over start ended");
                return None;
            }
        };
        let Ok(handed) = serde_json::from_str::<HandedAccount>(&row.account) else {
            tracing::debug!("the handed-over start cannot be read: starting the full way");
            return None;
        };
        if handed.account_service != self.config.urls.account
            || self.check_wallet(&handed.wallet).is_err()
        {
            return None;
        }
        let jwt = row.session_jwt?;
        if let Err(error) =
            self.session.adopt(&jwt, row.session_expires_at, HANDOVER_MARGIN_SECS).await
        {
            tracing::debug!(%error, "the handed-over session was not taken");
            return None;
        }
        Some((handed.account, handed.wallet))
    }

    /// From now on every session fetched (renewals) is kept for the next client with the
    /// account, so that the session kept stays current.
    pub(super) fn keep_sessions_handed_over(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        self.session.on_fetched(move |session| {
            if let Some(inner) = weak.upgrade() {
                let (session, runtime) = (session.clone(), Arc::clone(&inner.runtime));
                drop(runtime.spawn_blocking(move || inner.save_renewed(&session)));
            }
        });
    }

    /// Keeps this start for the owner's next client, with the current session. Waits for the
    /// write; a failure only costs the next client the full start.
    pub(super) async fn hand_over(self: &Arc<Self>, account: &AccountInfo, wallet: &str) {
        let Ok(session) = self.session.get().await else { return };
        let row = self.start_row(account, wallet, &session);
        let inner = Arc::clone(self);
        let saved = self.runtime.spawn_blocking(move || inner.save_start(&row)).await;
        if let Err(error) = saved {
            tracing::debug!(%error, "saving the start for the next client ended");
        }
    }

    /// Saves `session` with the account, once the client is initialized (before, the start's
    /// own save covers it).
    fn save_renewed(&self, session: &Session) {
        let started = {
            let state = self.state();
            state.account.clone().zip(state.wallet.clone())
        };
        if let Some((account, wallet)) = started {
            self.save_start(&self.start_row(&account, &wallet, session));
        }
    }

    fn save_start(&self, row: &StartRow) {
        if let Err(error) = self.hub.store().save_start(row, now_ms()) {
            tracing::debug!(%error, "the start could not be kept for the next client");
        }
    }

    fn start_row(&self, account: &AccountInfo, wallet: &str, session: &Session) -> StartRow {
        let handed = HandedAccount {
            account: account.clone(),
            wallet: wallet.to_owned(),
            account_service: self.config.urls.account.clone(),
        };
        StartRow {
            account: serde_json::to_string(&handed).unwrap_or_default(),
            session_jwt: Some(session.jwt.to_string()),
            session_expires_at: session.expires_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_start_names_its_accounts_deposit_addresses() {
        let handed = HandedAccount {
            account: AccountInfo {
                account_id: "acc_1".to_owned(),
                owner_address: "0x00000000000000000000000000000000000000aa".to_owned(),
                evm_address: "0x00000000000000000000000000000000000000Ee".to_owned(),
                solana_address: "So1ana".to_owned(),
            },
            wallet: "0x00000000000000000000000000000000000000aa".to_owned(),
            account_service: "http://127.0.0.1:1".to_owned(),
        };
        let row = StartRow {
            account: serde_json::to_string(&handed).unwrap(),
            session_jwt: None,
            session_expires_at: 0,
        };
        let evm = "0x00000000000000000000000000000000000000Ee".to_owned();
        assert_eq!(
            row.deposit_addresses(),
            Some(DepositAddresses { evm, solana: "So1ana".into() })
        );
        let unreadable = StartRow { account: "{\"account\":1}".to_owned(), ..row };
        assert_eq!(unreadable.deposit_addresses(), None);
    }
}
