//! [`ParticleBackend`]: the deposit engine's [`AccountBackend`] over Particle's service and a
//! server-side signer.
//!
//! - The universal account of a depositkit owner is owned by that owner's signer
//!   ([`SignerSource::signer_for`]): the account object's `ownerAddress` is the signer's
//!   address, EIP-55 (what viem's and ethers' `account.address` give).
//! - Balances: `universal_getPrimaryAssets` per account, a bounded number at once; the raw
//!   amounts come from each token's real decimals. Particle keeps no cumulative `received`.
//! - A quote of exactly a deposit: `quote.rs`; what a prepared transfer keeps and how the
//!   service's answers are read: `transfer.rs`.
//! - The signature is the signer's EIP-191 signature of the root, made off the async workers
//!   (a host callback may block); the send is [`ParticleClient::send_once`]; its status is
//!   `universal_getTransaction`'s.

mod quote;
mod transfer;

use std::sync::Arc;

use alloy_primitives::{B256, hex};

use super::ParticleClient;
use super::answers::AccountOptions;
use super::assets::TokenRef;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::services::backend::{
    AccountBackend, AccountBalance, BackendAccount, BackendFuture, PreparedTransfer, SendFailure,
};
use crate::services::{
    QuoteRequest, SendResult, TokenTransactionsResponse, TransactionsResponse, UaTransaction,
};
use crate::signer::SignerSource;
use transfer::{balance_lines, parse_signature, pending, prepared, send_result_of};

/// Particle's service with a signer for every owner.
#[derive(Debug, Clone)]
pub struct ParticleBackend {
    client: ParticleClient,
    signers: Arc<dyn SignerSource>,
}

impl ParticleBackend {
    /// The backend of `client`, the owners' accounts signed for by `signers`.
    pub fn new(client: ParticleClient, signers: Arc<dyn SignerSource>) -> ParticleBackend {
        ParticleBackend { client, signers }
    }

    /// The client.
    pub fn client(&self) -> &ParticleClient {
        &self.client
    }

    /// The account object of an opened account.
    fn options(&self, account: &BackendAccount) -> AccountOptions {
        let mut options = self.client.account_options(&account.signer_address);
        options.smart_account_address = Some(account.evm_address.clone());
        options.solana_smart_account_address = Some(account.solana_address.clone());
        options
    }
}

impl AccountBackend for ParticleBackend {
    fn name(&self) -> &'static str {
        "particle"
    }

    fn open_account<'a>(&'a self, owner: &'a str) -> BackendFuture<'a, Result<BackendAccount>> {
        Box::pin(async move {
            let signer = self.signers.signer_for(owner)?;
            let address = signer.address().to_checksum(None);
            let options = self.client.open(&address).await?;
            Ok(BackendAccount {
                account_id: address.clone(),
                owner: owner.to_owned(),
                signer_address: address,
                evm_address: options.smart_account_address.unwrap_or_default(),
                solana_address: options.solana_smart_account_address.unwrap_or_default(),
            })
        })
    }

    fn balances<'a>(
        &'a self,
        accounts: &'a [BackendAccount],
    ) -> BackendFuture<'a, Vec<Result<Vec<AccountBalance>>>> {
        Box::pin(async move {
            let options: Vec<AccountOptions> = accounts.iter().map(|a| self.options(a)).collect();
            let answers = self.client.primary_assets_many(&options).await;
            answers.into_iter().map(|answer| answer.map(|assets| balance_lines(&assets))).collect()
        })
    }

    fn quote<'a>(
        &'a self,
        account: &'a BackendAccount,
        request: &'a QuoteRequest,
    ) -> BackendFuture<'a, Result<PreparedTransfer>> {
        Box::pin(self.quote_transfer(account, request))
    }

    fn sign<'a>(
        &'a self,
        account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
    ) -> BackendFuture<'a, Result<String>> {
        Box::pin(async move {
            let signer = self.signers.signer_for(&account.owner)?;
            let address = signer.address().to_checksum(None);
            if !address.eq_ignore_ascii_case(&account.signer_address) {
                return Err(Error::new(
                    ErrorKind::Authentication,
                    format!(
                        "the signer of owner {} is {address}, but the account is owned by {}",
                        quote(&account.owner),
                        quote(&account.signer_address)
                    ),
                ));
            }
            let root: B256 = transfer.quote.root_hash.parse().map_err(|_| {
                Error::new(
                    ErrorKind::Protocol,
                    format!(
                        "the root hash {} is not 32 bytes of hex",
                        quote(&transfer.quote.root_hash)
                    ),
                )
            })?;
            // A host callback may block (a KMS): off the async workers.
            let signature =
                tokio::task::spawn_blocking(move || signer.personal_sign(&root)).await.map_err(
                    |e| Error::new(ErrorKind::Internal, format!("the signing task failed: {e}")),
                )??;
            Ok(hex::encode_prefixed(signature))
        })
    }

    fn send_once<'a>(
        &'a self,
        _account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
        signature: &'a str,
    ) -> BackendFuture<'a, Result<SendResult, SendFailure>> {
        Box::pin(async move {
            let transaction = prepared(transfer).map_err(SendFailure::Refused)?;
            let signature = parse_signature(signature).map_err(SendFailure::Refused)?;
            let id = &transaction.transaction_id;
            let answer = self.client.send_once(&transaction, &signature, &[]).await?;
            // Just sent: an answer without a final status (or saying "never sent") is pending.
            Ok(send_result_of(id, &answer.result).unwrap_or_else(|| pending(id)))
        })
    }

    fn send_status<'a>(
        &'a self,
        _account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
    ) -> BackendFuture<'a, Result<Option<SendResult>>> {
        Box::pin(async move {
            let id = &transfer.quote.quote_id;
            let record = self.client.transaction(id).await?;
            if record.status.is_none() {
                return Err(Error::new(
                    ErrorKind::Protocol,
                    format!("transaction {} has no status", quote(id)),
                ));
            }
            Ok(send_result_of(id, &record.record))
        })
    }

    fn transactions<'a>(
        &'a self,
        account: &'a BackendAccount,
        page: u32,
        page_size: u32,
    ) -> BackendFuture<'a, Result<TransactionsResponse>> {
        Box::pin(async move {
            self.client.transactions(&self.options(account), page, page_size, None).await
        })
    }

    /// The SDK's `getTokenTransactions` has no page size: `page_size` is not sent.
    fn token_transactions<'a>(
        &'a self,
        account: &'a BackendAccount,
        chain_id: u64,
        token_address: &'a str,
        page_token: Option<&'a str>,
        _page_size: u32,
    ) -> BackendFuture<'a, Result<TokenTransactionsResponse>> {
        Box::pin(async move {
            let token = TokenRef { chain_id, address: token_address.to_owned() };
            self.client.token_transactions(&self.options(account), &token, page_token).await
        })
    }

    fn transaction<'a>(
        &'a self,
        _account: &'a BackendAccount,
        transaction_id: &'a str,
    ) -> BackendFuture<'a, Result<UaTransaction>> {
        Box::pin(async move {
            let record = self.client.transaction(transaction_id).await?;
            serde_json::from_value(record.record).map_err(|e| {
                Error::new(ErrorKind::Protocol, format!("universal_getTransaction: {e}"))
            })
        })
    }
}
