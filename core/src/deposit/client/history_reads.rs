//! The history calls' shared part (`get_transactions`, `get_token_transactions`,
//! `get_transaction`): the checks, the 30 s cache, and the read from the backend (devnet's
//! protocol through the session, or Particle's service), which the blocking methods
//! (`history.rs`) wait for and their `…_async` twins (`async_api.rs`) return as a `Task`.

use super::call::{Admitted, CachedRead};
use super::history::{backend_error, check_page_size, history_error};
use super::*;
use crate::runtime::WhenDropped;

impl DepositClient {
    /// `get_transactions()`: the arguments checked, then the cached page or its read.
    pub(super) fn admit_transactions(
        &self,
        page: Option<u32>,
        page_size: Option<u32>,
    ) -> Result<CachedRead<TransactionsResponse>> {
        self.inner.guard(ClientCall::GetTransactions)?;
        let page = page.unwrap_or(1);
        let page_size = check_page_size(page_size)?;
        if page == 0 {
            return Err(Error::invalid_argument("page must be at least 1, got 0"));
        }
        let key = HistoryCaches::page_key(page, page_size);
        let what = "get_transactions()";
        self.admit_cached(
            what,
            |c| &mut c.pages,
            key,
            move |inner, account_id| async move {
                if !inner.speaks_protocol() {
                    let services = inner.services();
                    let answer = services.backend.transactions(&services.owner, page, page_size);
                    return answer
                        .await
                        .map_err(|e| backend_error(e, "Failed to get transactions"));
                }
                with_session(&inner.session, |jwt| {
                    let account = &inner.account;
                    let id = account_id.clone();
                    async move { account.transactions(&jwt, &id, page, page_size).await }
                })
                .await
                .map_err(|e| history_error(e, "Failed to get transactions"))
            },
        )
    }

    /// `get_token_transactions()`: the filter checked, then the cached page or its read.
    pub(super) fn admit_token_transactions(
        &self,
        filter: &TokenTransactionFilter,
        page_token: Option<&str>,
    ) -> Result<CachedRead<TokenTransactionsResponse>> {
        self.inner.guard(ClientCall::GetTokenTransactions)?;
        let page_size = check_page_size(filter.page_size)?;
        if filter.address.trim().is_empty() {
            return Err(Error::invalid_argument("filter.address is empty"));
        }
        let key = HistoryCaches::token_key(filter, page_size, page_token);
        let chain_id = filter.chain_id;
        let address = filter.address.clone();
        let cursor = page_token.map(str::to_owned);
        let what = "get_token_transactions()";
        self.admit_cached(
            what,
            |c| &mut c.tokens,
            key,
            move |inner, account_id| async move {
                if !inner.speaks_protocol() {
                    let services = inner.services();
                    let answer = services.backend.token_transactions(
                        &services.owner,
                        chain_id,
                        &address,
                        cursor.as_deref(),
                        page_size,
                    );
                    return answer
                        .await
                        .map_err(|e| backend_error(e, "Failed to get token transactions"));
                }
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
            },
        )
    }

    /// `get_transaction()`: the id checked, then the cached transaction or its read.
    pub(super) fn admit_transaction(
        &self,
        transaction_id: &str,
    ) -> Result<CachedRead<UaTransaction>> {
        self.inner.guard(ClientCall::GetTransaction)?;
        if transaction_id.trim().is_empty() {
            return Err(Error::invalid_argument("transaction id is empty"));
        }
        let id = transaction_id.to_owned();
        let key = transaction_id.to_owned();
        let what = "get_transaction()";
        self.admit_cached(
            what,
            |c| &mut c.single,
            key,
            move |inner, account_id| async move {
                if !inner.speaks_protocol() {
                    let services = inner.services();
                    let answer = services.backend.transaction(&services.owner, &id);
                    return answer.await.map_err(|e| backend_error(e, "Failed to get transaction"));
                }
                with_session(&inner.session, |jwt| {
                    let account = &inner.account;
                    let (account_id, id) = (&account_id, &id);
                    async move { account.transaction(&jwt, account_id, id).await }
                })
                .await
                .map_err(|e| history_error(e, "Failed to get transaction"))
            },
        )
    }

    /// A history read through its cache (`cache` picks it in [`HistoryCaches`]), for an
    /// initialized client: a fresh cached answer, else `fetch` as a read whose answer is
    /// cached unless the history changed meanwhile; dropping its [`Task`](crate::runtime::Task) abandons it.
    fn admit_cached<T, F>(
        &self,
        what: &'static str,
        cache: fn(&mut HistoryCaches) -> &mut crate::deposit::history::TransactionCache<T>,
        key: String,
        fetch: impl FnOnce(Arc<Inner>, String) -> F,
    ) -> Result<CachedRead<T>>
    where
        T: Clone + Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        let account_id = self.inner.account_id()?;
        let generation = {
            let mut caches = self.inner.history.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(hit) = cache(&mut caches).get(&key, now_ms()) {
                return Ok(CachedRead::Cached { what, answer: hit });
            }
            caches.generation
        };
        let inner = Arc::clone(&self.inner);
        let fetched = fetch(Arc::clone(&self.inner), account_id);
        Ok(CachedRead::Read(Admitted::new(what, WhenDropped::Abort, async move {
            let answer = fetched.await?;
            let mut caches = inner.history.lock().unwrap_or_else(|e| e.into_inner());
            if caches.generation == generation {
                cache(&mut caches).set(&key, answer.clone(), now_ms());
            }
            Ok(answer)
        })))
    }
}
