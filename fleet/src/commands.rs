//! Commands through the database: any process asks for a sweep, a refund, a recovery or a
//! destination change of any owner; the member holding the owner executes it and records the
//! outcome; the requester waits for it with a timeout.
//!
//! A command is a row of `dk_commands` (`pending` → `running` → `done` / `failed`). The holder
//! claims it (`FOR UPDATE SKIP LOCKED`, stamped with its fence) when the `dk_commands` doorbell
//! rings, and at every tick. A command whose holder died while running it is claimed again by
//! the new holder (its stamp is an older fence); the client's own rules keep its effect single
//! (a deposit is swept or refunded once: a second attempt finds it done and says so).
//!
//! The outcome is recorded under the same fence as the owner's writes ([`finish`]): a member
//! that lost the owner while running a command cannot mark it done; the new holder runs it
//! again and records its own outcome.

use std::time::{Duration, Instant};

use depositkit_core::deposit::{
    DepositClient, DestinationConfig, RefundReason, RefundStatus, SweepStatus,
};
use serde_json::{Value, json};

use crate::db::Db;
use crate::error::{FleetError, Result, pg};
use crate::schema::FENCE_LOST;

/// The channel that wakes holders for new commands.
pub(crate) const CHANNEL: &str = "dk_commands";
/// The channel that wakes requesters for finished commands.
const DONE_CHANNEL: &str = "dk_commands_done";

/// What a command asks of an owner's client.
#[derive(Debug, Clone, PartialEq)]
pub enum FleetCommand {
    /// `DepositClient::sweep(deposit_id)`.
    Sweep {
        /// The deposit.
        deposit_id: String,
    },
    /// `DepositClient::refund(deposit_id, reason)`.
    Refund {
        /// The deposit.
        deposit_id: String,
        /// Why.
        reason: RefundReason,
    },
    /// `DepositClient::recover_funds()`.
    Recover,
    /// `DepositClient::set_destination(destination)`, and the owner's stored options, so a
    /// later holder keeps it.
    SetDestination(DestinationConfig),
}

impl FleetCommand {
    fn kind(&self) -> &'static str {
        match self {
            FleetCommand::Sweep { .. } => "sweep",
            FleetCommand::Refund { .. } => "refund",
            FleetCommand::Recover => "recover",
            FleetCommand::SetDestination(_) => "set_destination",
        }
    }

    fn args(&self) -> Value {
        match self {
            FleetCommand::Sweep { deposit_id } => json!({ "depositId": deposit_id }),
            FleetCommand::Refund { deposit_id, reason } => {
                json!({ "depositId": deposit_id, "reason": reason })
            }
            FleetCommand::Recover => json!({}),
            FleetCommand::SetDestination(destination) => json!({ "destination": destination }),
        }
    }

    fn from_row(kind: &str, args: &Value) -> std::result::Result<FleetCommand, String> {
        let text = |key: &str| {
            args.get(key).and_then(Value::as_str).map(str::to_owned).ok_or(format!("no {key}"))
        };
        let parse = |key: &str| args.get(key).cloned().ok_or(format!("no {key}"));
        match kind {
            "sweep" => Ok(FleetCommand::Sweep { deposit_id: text("depositId")? }),
            "refund" => Ok(FleetCommand::Refund {
                deposit_id: text("depositId")?,
                reason: serde_json::from_value(parse("reason")?).map_err(|e| e.to_string())?,
            }),
            "recover" => Ok(FleetCommand::Recover),
            "set_destination" => Ok(FleetCommand::SetDestination(
                serde_json::from_value(parse("destination")?).map_err(|e| e.to_string())?,
            )),
            other => Err(format!("unknown command kind '{other}'")),
        }
    }

    /// Runs the command on `client`: its result as JSON, or the client's error message.
    pub(crate) fn execute(&self, client: &DepositClient) -> std::result::Result<Value, String> {
        let json =
            |value: std::result::Result<Value, serde_json::Error>| value.map_err(|e| e.to_string());
        match self {
            FleetCommand::Sweep { deposit_id } => match client.sweep(deposit_id) {
                Ok(result) => json(serde_json::to_value(result)),
                Err(e) => Err(e.to_string()),
            },
            FleetCommand::Refund { deposit_id, reason } => {
                match client.refund(deposit_id, *reason) {
                    Ok(result) => json(serde_json::to_value(result)),
                    Err(e) => Err(e.to_string()),
                }
            }
            FleetCommand::Recover => match client.recover_funds() {
                Ok(results) => json(serde_json::to_value(results)),
                Err(e) => Err(e.to_string()),
            },
            FleetCommand::SetDestination(destination) => {
                match client.set_destination(destination.clone()) {
                    Ok(result) => json(serde_json::to_value(result)),
                    Err(e) => Err(e.to_string()),
                }
            }
        }
    }

    /// Runs a command claimed again (its previous holder died, or lost its connection, after
    /// claiming it: it may have run). A sweep or refund that succeeded already, as the owner's
    /// state records, is answered with its result, not run again (which would fail: "was
    /// credited", "was already refunded"), so the requester gets the outcome of the one run.
    /// A recovery and a destination change are run again: that is harmless.
    pub(crate) fn execute_again(
        &self,
        client: &DepositClient,
    ) -> std::result::Result<Value, String> {
        let done = match self {
            FleetCommand::Sweep { deposit_id } => client
                .sweep_result(deposit_id)
                .ok()
                .flatten()
                .filter(|r| r.status == SweepStatus::Success)
                .map(serde_json::to_value),
            FleetCommand::Refund { deposit_id, .. } => client
                .refund_result(deposit_id)
                .ok()
                .flatten()
                .filter(|r| r.status == RefundStatus::Success)
                .map(serde_json::to_value),
            FleetCommand::Recover | FleetCommand::SetDestination(_) => None,
        };
        match done {
            Some(result) => result.map_err(|e| e.to_string()),
            None => self.execute(client),
        }
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandOutcome {
    /// It ran: the client's result (a `SweepResult`, `RefundResult`, the recovery results or
    /// the new `Destination`) as JSON.
    Done(Value),
    /// The client refused it or it failed: the client's error message.
    Failed(String),
}

/// Inserts a command for `owner` and rings the holders' doorbell. Returns its id.
pub(crate) async fn insert(db: &Db, owner: &str, command: &FleetCommand) -> Result<i64> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "INSERT INTO dk_commands (owner, kind, args) \
             SELECT owner, $2, $3::text::jsonb FROM dk_owners WHERE owner = $1 RETURNING id",
            &[&owner, &command.kind(), &command.args().to_string()],
        )
        .await
        .map_err(pg)?
        .ok_or_else(|| FleetError::UnknownOwner(owner.to_owned()))?;
    client.batch_execute(&format!("NOTIFY {CHANNEL}")).await.map_err(pg)?;
    Ok(row.get(0))
}

/// Waits until command `id` ended, at most `timeout`.
pub(crate) async fn wait(db: &Db, id: i64, timeout: Duration) -> Result<CommandOutcome> {
    let deadline = Instant::now() + timeout;
    let rung = std::sync::Arc::new(tokio::sync::Notify::new());
    let listening = db.listen(DONE_CHANNEL, std::sync::Arc::clone(&rung)).await.ok();
    loop {
        let client = db.client().await?;
        let row = client
            .query_one("SELECT state, result, error FROM dk_commands WHERE id = $1", &[&id])
            .await
            .map_err(pg)?;
        drop(client);
        let state: String = row.get(0);
        match state.as_str() {
            "done" => {
                let result: Option<String> = row.get(1);
                let value = result.and_then(|r| serde_json::from_str(&r).ok()).unwrap_or_default();
                return Ok(CommandOutcome::Done(value));
            }
            "failed" => {
                return Ok(CommandOutcome::Failed(
                    row.get::<_, Option<String>>(2).unwrap_or_default(),
                ));
            }
            _ => {}
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(FleetError::CommandTimeout { id, timeout });
        }
        let nap = left.min(if listening.is_some() {
            Duration::from_secs(1)
        } else {
            Duration::from_millis(100)
        });
        let _ = tokio::time::timeout(nap, rung.notified()).await;
    }
}

/// A command claimed by a holder.
#[derive(Debug)]
pub(crate) struct Claimed {
    pub id: i64,
    pub owner: String,
    pub command: std::result::Result<FleetCommand, String>,
    /// Claimed before (it was `running`): it may have run already.
    pub again: bool,
}

/// Claims the pending commands of owners `node` holds (and running ones a previous holder left,
/// or `node` itself: a member runs its commands one at a time, so a row still `running` under
/// its name when it claims again is one whose outcome it failed to record, e.g. its
/// connection was cut between running it and `finish`).
pub(crate) async fn claim(db: &Db, node: &str, running: &[String]) -> Result<Vec<Claimed>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "WITH picked AS ( \
                 SELECT c2.id, c2.state = 'running' AS again \
                 FROM dk_commands c2 JOIN dk_owners o2 ON o2.owner = c2.owner \
                 WHERE o2.holder = $1 AND c2.owner = ANY($2) AND (c2.state = 'pending' \
                       OR (c2.state = 'running' \
                           AND (c2.fence < o2.fence OR c2.claimed_by = $1))) \
                 ORDER BY c2.id LIMIT 50 FOR UPDATE OF c2 SKIP LOCKED) \
             UPDATE dk_commands c SET state = 'running', claimed_by = $1, fence = o.fence \
             FROM dk_owners o, picked p \
             WHERE o.owner = c.owner AND c.id = p.id \
             RETURNING c.id, c.owner, c.kind, c.args::text, p.again",
            &[&node, &running],
        )
        .await
        .map_err(pg)?;
    Ok(rows
        .iter()
        .map(|row| {
            let args: Value = serde_json::from_str(row.get(3)).unwrap_or_default();
            Claimed {
                id: row.get(0),
                owner: row.get(1),
                command: FleetCommand::from_row(row.get(2), &args),
                again: row.get(4),
            }
        })
        .collect())
}

/// Records how command `id` ended and wakes the requesters, in one transaction fenced as the
/// owner's writes are: the command's row is locked, then `dk_check_fence(owner, node, fence)`
/// runs with the fence `node` claimed it under. A member that lost the owner since (a newer
/// holder took it, or its lease passed) records nothing: the command stays `running` under the
/// old fence, and the owner's holder claims it again. Nothing is recorded either when `node`
/// no longer has the command (another holder claimed it again meanwhile).
///
/// # Errors
/// [`FleetError::FenceLost`] when the fence is refused; database errors.
///
/// `destination`: the new destination of a destination-change command, stored in the owner's
/// options in the same transaction when the command succeeded.
pub(crate) async fn finish(
    db: &Db,
    node: &str,
    id: i64,
    outcome: &std::result::Result<Value, String>,
    destination: Option<&DestinationConfig>,
) -> Result<()> {
    let mut client = db.client().await?;
    let (state, result, error) = match outcome {
        Ok(value) => ("done", Some(value.to_string()), None),
        Err(message) => ("failed", None, Some(message.clone())),
    };
    let tx = client.transaction().await.map_err(pg)?;
    let Some(row) = tx
        .query_opt(
            "SELECT owner, fence FROM dk_commands \
             WHERE id = $1 AND claimed_by = $2 AND state = 'running' FOR UPDATE",
            &[&id, &node],
        )
        .await
        .map_err(pg)?
    else {
        return Ok(());
    };
    let (owner, fence): (String, Option<i64>) = (row.get(0), row.get(1));
    let fence = fence.unwrap_or(-1);
    tx.execute("SELECT dk_check_fence($1, $2, $3)", &[&owner, &node, &fence]).await.map_err(
        |e| match e.code() {
            Some(code) if code.code() == FENCE_LOST => {
                FleetError::FenceLost { owner: owner.clone(), fence }
            }
            _ => pg(e),
        },
    )?;
    // A destination change that ran is stored with its outcome, under the same fence.
    if let (Ok(_), Some(destination)) = (outcome, destination) {
        crate::owners::store_destination(&tx, &owner, destination).await?;
    }
    tx.execute(
        "UPDATE dk_commands SET state = $2, result = $3, error = $4, finished_at = now() \
         WHERE id = $1",
        &[&id, &state, &result, &error],
    )
    .await
    .map_err(pg)?;
    // Sent at the commit: requesters read the outcome once it is there.
    tx.batch_execute(&format!("NOTIFY {DONE_CHANNEL}")).await.map_err(pg)?;
    tx.commit().await.map_err(pg)
}

#[cfg(test)]
mod tests;
