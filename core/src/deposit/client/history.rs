//! `DepositClient`'s transaction history (spec §4): pages, by token, one by id, and their caches.

use super::*;

impl DepositClient {
    /// A page of the account's transactions (deposits, sweeps, refunds), newest first; `page`
    /// and `page_size` below 1 are taken as 1. Same as
    /// [`get_transactions`](DepositClient::get_transactions).
    ///
    /// # Errors
    /// As [`get_transactions`](DepositClient::get_transactions).
    pub fn transactions(&self, page: u32, page_size: u32) -> Result<TransactionsResponse> {
        self.get_transactions(Some(page.max(1)), Some(page_size.max(1)))
    }

    /// A page of the account's transactions (spec §2 `TransactionsResponse`): deposits
    /// (`receive`), sweeps (`sweep`) and refunds (`refund`), newest first. `page` defaults to
    /// 1, `page_size` to 10 (at most 100). Answers are cached 30 s (see [`super::history`]).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for page 0 or a page size outside 1..=100;
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`]
    /// ("Failed to get transactions: …"); [`ErrorKind::Timeout`].
    pub fn get_transactions(
        &self,
        page: Option<u32>,
        page_size: Option<u32>,
    ) -> Result<TransactionsResponse> {
        self.wait_for_cached(self.admit_transactions(page, page_size))
    }

    /// One token's transactions on one chain (spec §2 `TokenTransactionsResponse`), newest
    /// first, from the cursor `page_token` (`None`: the first page); `next_page_token` is the
    /// cursor of the next page, absent on the last. Cached 30 s.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for an empty address or a page size outside 1..=100;
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`]
    /// ("Failed to get token transactions: …", also for an unknown or stale `page_token`);
    /// [`ErrorKind::Timeout`].
    pub fn get_token_transactions(
        &self,
        filter: &TokenTransactionFilter,
        page_token: Option<&str>,
    ) -> Result<TokenTransactionsResponse> {
        self.wait_for_cached(self.admit_token_transactions(filter, page_token))
    }

    /// One transaction of the account (spec §2 `UATransaction`). Cached 30 s.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when the account has no such transaction;
    /// [`ErrorKind::InvalidArgument`] for an empty id; [`ErrorKind::Configuration`] before
    /// initialization; [`ErrorKind::UniversalAccount`] ("Failed to get transaction: …");
    /// [`ErrorKind::Timeout`].
    pub fn get_transaction(&self, transaction_id: &str) -> Result<UaTransaction> {
        self.wait_for_cached(self.admit_transaction(transaction_id))
    }
}

pub(super) fn check_page_size(page_size: Option<u32>) -> Result<u32> {
    let size = page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if size == 0 || size > MAX_PAGE_SIZE {
        return Err(Error::invalid_argument(format!(
            "page size must be between 1 and {MAX_PAGE_SIZE}, got {size}"
        )));
    }
    Ok(size)
}

/// A history call's failure on a backend other than devnet's protocol (Particle): its own
/// kind (authentication, rate limit, not found, …), the call named.
pub(super) fn backend_error(error: Error, what: &str) -> Error {
    Error::new(error.kind(), format!("{what}: {}", error.message())).with_source(error)
}

/// A history call's failure: 404 `NOT_FOUND` is [`ErrorKind::NotFound`], the rest
/// [`ErrorKind::UniversalAccount`] (401 after a renewal: [`ErrorKind::Jwt`]).
pub(super) fn history_error(error: CallError, what: &str) -> Error {
    match error {
        CallError::Service(e) if e.status == 404 && e.code == "NOT_FOUND" => {
            Error::new(ErrorKind::NotFound, format!("{what}: {e}"))
        }
        CallError::Service(e) if e.status == 401 => {
            Error::new(ErrorKind::Jwt, format!("{what}: the service refused the session ({e})"))
        }
        CallError::Service(e) => Error::new(ErrorKind::UniversalAccount, format!("{what}: {e}")),
        CallError::Session(e) => {
            Error::new(e.kind(), format!("{what}: {}", e.message())).with_source(e)
        }
        CallError::Transport(e) => {
            Error::new(ErrorKind::UniversalAccount, format!("{what}: {}", e.message()))
                .with_source(e)
        }
    }
}
