//! The chain-backed Solana chain (the LiteSVM JSON-RPC server of `tests/chains/svm_rpc.py`):
//! balances, devnet's signed transactions and what became of them.

use std::sync::{Mutex, MutexGuard, PoisonError};

use depositkit_core::ErrorKind;
use depositkit_core::U256;
use depositkit_core::chain::solana::SolanaRpc;
use depositkit_core::chain::solana_tx::{
    Instruction, Message, Pubkey, Signature, Transaction, associated_token_address,
    create_associated_token_account_idempotent, spl_transfer_checked, system_transfer,
};
use depositkit_core::services::HttpSettings;

use super::config::{Asset, SOLANA_CHAIN_ID, TokenConfig};
use super::keys::SolanaKey;
use super::{CONFIRM_TIMEOUT, ChainError, ChainResult};

/// What became of a transaction devnet sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// Processed: `None` when it succeeded, else the SVM's error.
    Landed(Option<String>),
    /// Refused (preflight, expired blockhash) and not processed: it never will be.
    Dropped(String),
}

/// A signed transaction: wire bytes and signature (its id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedTx {
    pub raw: Vec<u8>,
    pub signature: Signature,
}

/// The Solana chain.
pub struct SolanaChain {
    rpc: SolanaRpc,
    /// Held while the vault stocks itself, so that two top-ups do not both mint.
    vault: Mutex<()>,
}

impl std::fmt::Debug for SolanaChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolanaChain").finish_non_exhaustive()
    }
}

/// Parses a base58 public key.
///
/// # Errors
/// A message saying why it is not one.
pub fn pubkey(text: &str) -> Result<Pubkey, String> {
    text.trim().parse().map_err(|e: depositkit_core::Error| e.message().to_owned())
}

/// The mint of a token of the chains file.
///
/// # Errors
/// A message when the file's address is not a key (the file is validated, so it is).
pub fn mint(token: &TokenConfig) -> Result<Pubkey, String> {
    pubkey(&token.address)
}

impl SolanaChain {
    /// The chain whose node is at `url`.
    pub fn new(url: &str, settings: &HttpSettings) -> Self {
        SolanaChain { rpc: SolanaRpc::new(url, settings), vault: Mutex::new(()) }
    }

    /// The node's client, for development methods (`svm_mintTo`).
    pub fn rpc(&self) -> &SolanaRpc {
        &self.rpc
    }

    /// An error of Solana.
    pub fn fail(&self, message: impl std::fmt::Display) -> ChainError {
        ChainError::new(SOLANA_CHAIN_ID, message)
    }

    /// Holds the vault's lock on Solana.
    pub fn lock_vault(&self) -> MutexGuard<'_, ()> {
        self.vault.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What `owner` holds of `asset`: lamports, or the raw amount of all its token accounts of
    /// the mint.
    ///
    /// # Errors
    /// The node failed.
    pub fn balance(&self, owner: &Pubkey, asset: Asset<'_>) -> ChainResult<U256> {
        match asset {
            Asset::Native => self.rpc.balance(owner).map(U256::from).map_err(|e| self.fail(e)),
            Asset::Token(token) => {
                let mint = mint(token).map_err(|e| self.fail(e))?;
                let accounts =
                    self.rpc.token_accounts_by_owner(owner, &mint).map_err(|e| self.fail(e))?;
                Ok(accounts
                    .iter()
                    .fold(U256::ZERO, |sum, a| sum.saturating_add(U256::from(a.raw_amount))))
            }
        }
    }

    /// Whether an account exists at `key`.
    ///
    /// # Errors
    /// The node failed.
    pub fn account_exists(&self, key: &Pubkey) -> ChainResult<bool> {
        self.rpc.account_exists(key).map_err(|e| self.fail(e))
    }

    /// The rent-exempt minimum of an account without data, in lamports.
    ///
    /// # Errors
    /// The node failed.
    pub fn rent_exempt_minimum(&self) -> ChainResult<u64> {
        self.rpc.minimum_balance_for_rent_exemption(0).map_err(|e| self.fail(e))
    }

    /// The instructions that move `amount` of `asset` from `from` to `to`: a system transfer,
    /// or `CreateIdempotent` of `to`'s token account (paid by `payer`) and `TransferChecked`
    /// between the associated token accounts.
    ///
    /// # Errors
    /// An amount that does not fit Solana's 64 bits.
    pub fn transfer_instructions(
        &self,
        payer: &Pubkey,
        from: &Pubkey,
        to: &Pubkey,
        asset: Asset<'_>,
        amount: U256,
    ) -> ChainResult<Vec<Instruction>> {
        let amount = u64::try_from(amount)
            .map_err(|_| self.fail(format!("{amount} does not fit a Solana amount (64 bits)")))?;
        Ok(match asset {
            Asset::Native => vec![system_transfer(from, to, amount)],
            Asset::Token(token) => {
                let mint = mint(token).map_err(|e| self.fail(e))?;
                vec![
                    create_associated_token_account_idempotent(payer, to, &mint),
                    spl_transfer_checked(
                        &associated_token_address(from, &mint),
                        &mint,
                        &associated_token_address(to, &mint),
                        from,
                        amount,
                        token.decimals,
                    ),
                ]
            }
        })
    }

    /// Builds `instructions` on a fresh blockhash with `payer` paying the fee, and signs with
    /// `payer` and `others` (every signer the message needs must be among them).
    ///
    /// # Errors
    /// The node failed, or a signer is missing.
    pub fn sign(
        &self,
        instructions: &[Instruction],
        payer: &SolanaKey,
        others: &[&SolanaKey],
    ) -> ChainResult<SignedTx> {
        let blockhash = self.rpc.latest_blockhash().map_err(|e| self.fail(e))?;
        let payer_key = Pubkey::new_from_array(payer.public_key());
        let message =
            Message::new(instructions, &payer_key, blockhash).map_err(|e| self.fail(e))?;
        let bytes = message.serialize();
        let keys: Vec<&SolanaKey> = std::iter::once(payer).chain(others.iter().copied()).collect();
        let signatures = message
            .signers()
            .iter()
            .map(|signer| {
                keys.iter()
                    .find(|k| k.public_key() == signer.to_bytes())
                    .map(|k| Signature::new_from_array(k.sign(&bytes)))
                    .ok_or_else(|| self.fail(format!("no key to sign for {signer}")))
            })
            .collect::<ChainResult<Vec<_>>>()?;
        let signature =
            *signatures.first().ok_or_else(|| self.fail("a message without signers"))?;
        let transaction =
            Transaction::with_signatures(message, signatures).map_err(|e| self.fail(e))?;
        Ok(SignedTx { raw: transaction.serialize(), signature })
    }

    /// Sends `raw` and waits until it is confirmed or failed.
    ///
    /// # Errors
    /// The node could not be reached (the transaction may or may not have been sent), or it was
    /// not confirmed in time.
    pub fn send(&self, raw: &[u8], signature: &Signature) -> ChainResult<Fate> {
        match self.rpc.send_transaction(raw) {
            Ok(_) => self.wait(signature),
            Err(e) if e.kind() == ErrorKind::Rpc => {
                // Refused (preflight, expired blockhash, already processed): it counts only if
                // it was processed before.
                match self.rpc.signature_status(signature).map_err(|e| self.fail(e))? {
                    Some(status) => Ok(Fate::Landed(status.err.map(|e| e.to_string()))),
                    None => Ok(Fate::Dropped(e.message().to_owned())),
                }
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// What became of a transaction stored before it was (perhaps) sent: its status when
    /// processed, else the outcome of sending it (again).
    ///
    /// # Errors
    /// As [`SolanaChain::send`].
    pub fn settle(&self, raw: &[u8], signature: &Signature) -> ChainResult<Fate> {
        match self.rpc.signature_status(signature).map_err(|e| self.fail(e))? {
            Some(status) => Ok(Fate::Landed(status.err.map(|e| e.to_string()))),
            None => self.send(raw, signature),
        }
    }

    fn wait(&self, signature: &Signature) -> ChainResult<Fate> {
        let status =
            self.rpc.wait_confirmed(signature, CONFIRM_TIMEOUT).map_err(|e| self.fail(e))?;
        Ok(Fate::Landed(status.err.map(|e| e.to_string())))
    }
}
