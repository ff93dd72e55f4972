//! The registered owners (`dk_owners`): added, removed and configured durably, from any
//! process of the fleet.

use depositkit_core::deposit::store_contract::StartRow;
use depositkit_core::deposit::{DepositAddresses, DestinationConfig};
use serde_json::{Value, json};

use crate::db::Db;
use crate::error::{FleetError, Result, pg};

/// An owner's own options, kept with its registration (no secrets: every member reads them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnerOptions {
    /// Where its deposits go; `None`: the fleet's configuration template's destination.
    pub destination: Option<DestinationConfig>,
}

impl OwnerOptions {
    pub(crate) fn to_json(&self) -> Value {
        match &self.destination {
            Some(destination) => json!({ "destination": destination }),
            None => json!({}),
        }
    }

    pub(crate) fn from_json(owner: &str, text: &str) -> Result<OwnerOptions> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            FleetError::Postgres(format!("the options of owner {owner} cannot be read: {e}"))
        })?;
        let destination = match value.get("destination") {
            None | Some(Value::Null) => None,
            Some(destination) => {
                Some(serde_json::from_value(destination.clone()).map_err(|e| {
                    FleetError::Postgres(format!(
                        "the destination of owner {owner} cannot be read: {e}"
                    ))
                })?)
            }
        };
        Ok(OwnerOptions { destination })
    }
}

/// An owner address, lower-case; refused unless `0x` and 40 hex digits.
///
/// # Errors
/// [`FleetError::InvalidOwner`] naming the value.
pub fn owner_address(owner: &str) -> Result<String> {
    let hex = owner.strip_prefix("0x").or_else(|| owner.strip_prefix("0X"));
    match hex {
        Some(hex) if hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(format!("0x{}", hex.to_ascii_lowercase()))
        }
        _ => Err(FleetError::InvalidOwner {
            owner: format!("'{owner}'"),
            message: "expected 0x and 40 hex digits".to_owned(),
        }),
    }
}

/// Registers `owner` with `options`.
pub(crate) async fn add(db: &Db, owner: &str, options: &OwnerOptions) -> Result<()> {
    let client = db.client().await?;
    let inserted = client
        .execute(
            "INSERT INTO dk_owners (owner, options) VALUES ($1, $2::text::jsonb) \
             ON CONFLICT (owner) DO NOTHING",
            &[&owner, &options.to_json().to_string()],
        )
        .await
        .map_err(pg)?;
    if inserted == 0 {
        return Err(FleetError::DuplicateOwner(owner.to_owned()));
    }
    Ok(())
}

/// Removes `owner`: its holder stops its client within a tick. Its deposit state stays
/// (registered again, it resumes where it stopped).
pub(crate) async fn remove(db: &Db, owner: &str) -> Result<()> {
    let client = db.client().await?;
    let removed =
        client.execute("DELETE FROM dk_owners WHERE owner = $1", &[&owner]).await.map_err(pg)?;
    if removed == 0 {
        return Err(FleetError::UnknownOwner(owner.to_owned()));
    }
    Ok(())
}

/// Replaces the options of `owner` (its holder restarts its client with them).
pub(crate) async fn set_options(db: &Db, owner: &str, options: &OwnerOptions) -> Result<()> {
    let client = db.client().await?;
    let updated = client
        .execute(
            "UPDATE dk_owners SET options = $2::text::jsonb, fence = fence + 1, holder = NULL \
             WHERE owner = $1",
            &[&owner, &options.to_json().to_string()],
        )
        .await
        .map_err(pg)?;
    if updated == 0 {
        return Err(FleetError::UnknownOwner(owner.to_owned()));
    }
    Ok(())
}

/// The options of `owner`.
pub(crate) async fn options(db: &Db, owner: &str) -> Result<OwnerOptions> {
    let client = db.client().await?;
    let row = client
        .query_opt("SELECT options::text FROM dk_owners WHERE owner = $1", &[&owner])
        .await
        .map_err(pg)?
        .ok_or_else(|| FleetError::UnknownOwner(owner.to_owned()))?;
    OwnerOptions::from_json(owner, row.get(0))
}

/// Every registered owner, sorted.
pub(crate) async fn list(db: &Db) -> Result<Vec<String>> {
    let client = db.client().await?;
    let rows = client.query("SELECT owner FROM dk_owners ORDER BY owner", &[]).await.map_err(pg)?;
    Ok(rows.iter().map(|row| row.get(0)).collect())
}

/// Who holds `owner` now (node id and fence), if anyone.
pub(crate) async fn holder(db: &Db, owner: &str) -> Result<(Option<String>, i64)> {
    let client = db.client().await?;
    let row = client
        .query_opt("SELECT holder, fence FROM dk_owners WHERE owner = $1", &[&owner])
        .await
        .map_err(pg)?
        .ok_or_else(|| FleetError::UnknownOwner(owner.to_owned()))?;
    Ok((row.get(0), row.get(1)))
}

/// The deposit addresses of `owner`'s account, from the start its holder kept
/// (`dk_clients.start_account`): `None` until a client of it has started once.
pub(crate) async fn deposit_addresses(db: &Db, owner: &str) -> Result<Option<DepositAddresses>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT c.start_account FROM dk_owners o LEFT JOIN dk_clients c USING (owner) \
             WHERE o.owner = $1",
            &[&owner],
        )
        .await
        .map_err(pg)?
        .ok_or_else(|| FleetError::UnknownOwner(owner.to_owned()))?;
    let Some(account) = row.get::<_, Option<String>>(0) else { return Ok(None) };
    let start = StartRow { account, session_jwt: None, session_expires_at: 0 };
    start.deposit_addresses().map(Some).ok_or_else(|| {
        FleetError::Postgres(format!(
            "the account kept for owner {owner} cannot be read (kept by another version)"
        ))
    })
}

/// Stores `owner`'s new destination in its options, inside `tx`: the fenced transaction that
/// records the destination-change command's outcome ([`crate::commands::finish`]), so that a
/// holder that lost the owner changes neither.
pub(crate) async fn store_destination(
    tx: &tokio_postgres::Transaction<'_>,
    owner: &str,
    destination: &DestinationConfig,
) -> Result<()> {
    let json = serde_json::to_string(destination).unwrap_or_default();
    tx.execute(
        "UPDATE dk_owners SET options = jsonb_set(options, '{destination}', $2::text::jsonb) \
         WHERE owner = $1",
        &[&owner, &json],
    )
    .await
    .map_err(pg)?;
    Ok(())
}
