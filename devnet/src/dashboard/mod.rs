//! The devnet dashboard (`docs/dashboard.md`): a page served by devnet itself at
//! `{servicesUrl}/dashboard/` that shows the owners with their deposit addresses and balances,
//! each deposit's lifecycle as devnet sees it, live, and the event log, and that sends deposits
//! and arms and clears faults. The page, its script and its style sheet are compiled into the
//! binary: nothing is built by the user and nothing is loaded from elsewhere.
//!
//! [`feed`] keeps the events ([`Activity`], one per server, in `Services`), [`events`] turns
//! what the store recorded into them, [`view`] is the rest of what the page reads,
//! [`controls`] what its forms do, and [`routes`] the HTTP face. The two functions below are the
//! hooks the services call for what the store does not record.

pub mod attribution;
pub mod controls;
pub mod events;
pub mod feed;
pub mod routes;
pub mod view;

use serde_json::json;

pub use feed::Activity;
pub(crate) use routes::router;

use crate::faults::Planned;
use crate::services::Services;
use crate::services::api::ApiResult;
use crate::services::faults::Service;

/// Records a send of quote `quote_id` that the service refused (an injected rejection, an
/// expired quote, a balance that changed): the deposit's attempt failed, and no money moved.
/// Blocking (it reads the store first, so that the quote is known).
pub fn refused_send<T>(services: &Services, quote_id: &str, sent: &ApiResult<T>) {
    if let Err(error) = sent
        && let Err(e) = services.activity.send_refused(&services.store, quote_id, error)
    {
        eprintln!("depositkit-devnet: dashboard: cannot read the store: {e}");
    }
}

/// Records that an injected fault of `service` applied to a request for `path`.
pub fn fault_fired(services: &Services, service: Service, path: &str, planned: &Planned) {
    if *planned == Planned::default() {
        return;
    }
    services.activity.push(json!({
        "kind": "fault",
        "service": service.as_str(),
        "path": path,
        "status": planned.status.map(|(status, _)| status),
        "delayMs": planned.delay.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    }));
}
