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
        self.inner.guard(ClientCall::GetTransactions)?;
        let page = page.unwrap_or(1);
        let page_size = check_page_size(page_size)?;
        if page == 0 {
            return Err(Error::invalid_argument("page must be at least 1, got 0"));
        }
        let account_id = self.inner.account_id()?;
        let key = HistoryCaches::page_key(page, page_size);
        let generation = {
            let mut caches = self.history();
            if let Some(hit) = caches.pages.get(&key, now_ms()) {
                return Ok(hit);
            }
            caches.generation
        };
        let inner = Arc::clone(&self.inner);
        let answer = self
            .inner
            .runtime
            .block_on("get_transactions()", self.inner.config.call_timeout, async move {
                with_session(&inner.session, |jwt| {
                    let account = &inner.account;
                    let id = account_id.clone();
                    async move { account.transactions(&jwt, &id, page, page_size).await }
                })
                .await
                .map_err(|e| history_error(e, "Failed to get transactions"))
            })
            .and_then(|r| r)?;
        let mut caches = self.history();
        if caches.generation == generation {
            caches.pages.set(&key, answer.clone(), now_ms());
        }
        Ok(answer)
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
        self.inner.guard(ClientCall::GetTokenTransactions)?;
        let page_size = check_page_size(filter.page_size)?;
        if filter.address.trim().is_empty() {
            return Err(Error::invalid_argument("filter.address is empty"));
        }
        let account_id = self.inner.account_id()?;
        let key = HistoryCaches::token_key(filter, page_size, page_token);
        let generation = {
            let mut caches = self.history();
            if let Some(hit) = caches.tokens.get(&key, now_ms()) {
                return Ok(hit);
            }
            caches.generation
        };
        let inner = Arc::clone(&self.inner);
        let chain_id = filter.chain_id;
        let address = filter.address.clone();
        let cursor = page_token.map(str::to_owned);
        let answer = self
            .inner
            .runtime
            .block_on("get_token_transactions()", self.inner.config.call_timeout, async move {
                with_session(&inner.session, |jwt| {
                    let account = &inner.account;
                    let (id, address, cursor) = (&account_id, &address, cursor.as_deref());
                    async move {
                        account
                            .token_transactions(&jwt, id, chain_id, address, cursor, page_size)
                            .await
                    }
                })
                .await
                .map_err(|e| history_error(e, "Failed to get token transactions"))
            })
            .and_then(|r| r)?;
        let mut caches = self.history();
        if caches.generation == generation {
            caches.tokens.set(&key, answer.clone(), now_ms());
        }
        Ok(answer)
    }

    /// One transaction of the account (spec §2 `UATransaction`). Cached 30 s.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when the account has no such transaction;
    /// [`ErrorKind::InvalidArgument`] for an empty id; [`ErrorKind::Configuration`] before
    /// initialization; [`ErrorKind::UniversalAccount`] ("Failed to get transaction: …");
    /// [`ErrorKind::Timeout`].
    pub fn get_transaction(&self, transaction_id: &str) -> Result<UaTransaction> {
        self.inner.guard(ClientCall::GetTransaction)?;
        if transaction_id.trim().is_empty() {
            return Err(Error::invalid_argument("transaction id is empty"));
        }
        let account_id = self.inner.account_id()?;
        let generation = {
            let mut caches = self.history();
            if let Some(hit) = caches.single.get(transaction_id, now_ms()) {
                return Ok(hit);
            }
            caches.generation
        };
        let inner = Arc::clone(&self.inner);
        let id = transaction_id.to_owned();
        let answer = self
            .inner
            .runtime
            .block_on("get_transaction()", self.inner.config.call_timeout, async move {
                with_session(&inner.session, |jwt| {
                    let account = &inner.account;
                    let (account_id, id) = (&account_id, &id);
                    async move { account.transaction(&jwt, account_id, id).await }
                })
                .await
                .map_err(|e| history_error(e, "Failed to get transaction"))
            })
            .and_then(|r| r)?;
        let mut caches = self.history();
        if caches.generation == generation {
            caches.single.set(transaction_id, answer.clone(), now_ms());
        }
        Ok(answer)
    }

    fn history(&self) -> MutexGuard<'_, HistoryCaches> {
        self.inner.history.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn check_page_size(page_size: Option<u32>) -> Result<u32> {
    let size = page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if size == 0 || size > MAX_PAGE_SIZE {
        return Err(Error::invalid_argument(format!(
            "page size must be between 1 and {MAX_PAGE_SIZE}, got {size}"
        )));
    }
    Ok(size)
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
