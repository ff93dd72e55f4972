//! Faults of the deposit services: HTTP faults per service (optionally per path prefix), and
//! sweep faults that make the next sends be rejected or fail.
//!
//! `POST /devnet/faults` takes `{"service"?, "path"?, "status"?, "retryAfter"?, "delayMs"?,
//! "count"?}`; without `service` it means the user-lookup service, as it always did.

use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::faults::{Fault, Faults, Planned};

/// A service devnet serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Service {
    /// `/jwt`.
    Jwt,
    /// `/signer`.
    Signer,
    /// `/ua`.
    Ua,
    /// `/user-rpc`.
    UserRpc,
    /// `/particle`, the Particle JSON-RPC: a fault's `path` is `/` + the JSON-RPC method
    /// (`/universal_sendTransaction`).
    Particle,
}

impl Service {
    /// Every service.
    pub const ALL: [Service; 5] =
        [Service::Jwt, Service::Signer, Service::Ua, Service::UserRpc, Service::Particle];

    /// The name used in `/devnet/faults` (`"jwt"`, `"signer"`, `"ua"`, `"user-rpc"`,
    /// `"particle"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Service::Jwt => "jwt",
            Service::Signer => "signer",
            Service::Ua => "ua",
            Service::UserRpc => "user-rpc",
            Service::Particle => "particle",
        }
    }

    /// Where the service is mounted (`/jwt`, …).
    pub const fn prefix(self) -> &'static str {
        match self {
            Service::Jwt => "/jwt",
            Service::Signer => "/signer",
            Service::Ua => "/ua",
            Service::UserRpc => "/user-rpc",
            Service::Particle => "/particle",
        }
    }

    /// The service serving `path` and the path below the service's prefix.
    pub fn of_path(path: &str) -> Option<(Service, &str)> {
        Service::ALL.into_iter().find_map(|service| {
            let rest = path.strip_prefix(service.prefix())?;
            (rest.is_empty() || rest.starts_with('/')).then_some((service, rest))
        })
    }
}

/// A `POST /devnet/faults` body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultRequest {
    pub service: Option<Service>,
    pub path: Option<String>,
    pub status: Option<u16>,
    pub retry_after: Option<u64>,
    pub delay_ms: Option<u64>,
    pub count: Option<u32>,
}

impl FaultRequest {
    /// The fault itself, without service and path.
    pub fn fault(&self) -> Fault {
        Fault {
            status: self.status,
            retry_after: self.retry_after,
            delay_ms: self.delay_ms,
            count: self.count,
        }
    }
}

/// Pending HTTP faults of the jwt, signer, ua and particle services.
#[derive(Debug, Default)]
pub struct ServiceFaults {
    entries: Mutex<Vec<Entry>>,
}

#[derive(Debug)]
struct Entry {
    service: Service,
    /// Path prefix below the service's mount point; `None` for every path.
    path: Option<String>,
    faults: Faults,
}

impl ServiceFaults {
    /// Arms `fault` for `service` (at paths starting with `path` when given: below the
    /// service's prefix, `/v1/sweeps/send`, or with it, `/ua/v1/sweeps/send`). Replaces a pending
    /// fault of the same kind for the same service and path.
    ///
    /// # Errors
    /// A message saying what is wrong.
    pub fn inject(
        &self,
        service: Service,
        path: Option<&str>,
        fault: &Fault,
    ) -> Result<(), String> {
        let path = match path {
            None => None,
            Some(path) if !path.starts_with('/') => {
                return Err(format!(
                    "\"path\" must start with /, got {}",
                    crate::describe::quote(path)
                ));
            }
            Some(path) => {
                let below = match Service::of_path(path) {
                    Some((owner, rest)) if owner == service => rest,
                    _ => path,
                };
                (!below.is_empty() && below != "/").then(|| below.to_owned())
            }
        };
        let mut entries = self.lock();
        let index = match entries.iter().position(|e| e.service == service && e.path == path) {
            Some(index) => index,
            None => {
                entries.push(Entry { service, path, faults: Faults::default() });
                entries.len() - 1
            }
        };
        entries[index].faults.inject(fault)
    }

    /// What applies to a request to `service` at `path` (below its prefix): the most specific
    /// armed fault, whose count it uses up.
    pub fn take(&self, service: Service, path: &str) -> Planned {
        let mut entries = self.lock();
        entries.sort_by_key(|e| std::cmp::Reverse(e.path.as_ref().map_or(0, String::len)));
        for entry in entries.iter().filter(|e| e.service == service) {
            if entry.path.as_deref().is_none_or(|prefix| path.starts_with(prefix)) {
                let planned = entry.faults.take();
                if planned != Planned::default() {
                    return planned;
                }
            }
        }
        Planned::default()
    }

    /// The pending faults, each with its `service` (and `path`).
    pub fn pending(&self) -> Vec<Value> {
        let entries = self.lock();
        let mut out = Vec::new();
        for entry in entries.iter() {
            for fault in entry.faults.pending() {
                let mut value = json!(fault);
                value["service"] = json!(entry.service);
                if let Some(path) = &entry.path {
                    value["path"] = json!(path);
                }
                out.push(value);
            }
        }
        out
    }

    /// Disarms everything.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What an injected sweep fault does to a send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepFaultMode {
    /// 400 `ROUTE_FAILED` before any money moves; the quote stays unsent.
    Reject,
    /// 200 with `status: "failed"`; the money stays in the account.
    Fail,
}

/// The pending sweep fault.
#[derive(Debug, Default)]
pub struct SweepFaults {
    state: Mutex<Option<(SweepFaultMode, u32)>>,
}

impl SweepFaults {
    /// The next `count` sends get `mode` (0 disarms).
    pub fn arm(&self, mode: SweepFaultMode, count: u32) {
        *self.lock() = (count > 0).then_some((mode, count));
    }

    /// The fault for the send now being served, using up one count.
    pub fn take(&self) -> Option<SweepFaultMode> {
        let mut state = self.lock();
        let (mode, left) = (*state)?;
        *state = (left > 1).then_some((mode, left - 1));
        Some(mode)
    }

    /// `{"mode", "count"}` when armed.
    pub fn pending(&self) -> Option<Value> {
        self.lock().map(|(mode, count)| json!({ "mode": mode, "count": count }))
    }

    /// Disarms.
    pub fn clear(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(SweepFaultMode, u32)>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn paths_and_services() {
        assert_eq!(Service::of_path("/ua/v1/balances"), Some((Service::Ua, "/v1/balances")));
        assert_eq!(Service::of_path("/jwt"), Some((Service::Jwt, "")));
        assert_eq!(Service::of_path("/uax"), None);
        assert_eq!(Service::of_path("/devnet/faults"), None);
    }

    #[test]
    fn the_most_specific_fault_applies_first() {
        let faults = ServiceFaults::default();
        faults.inject(Service::Ua, None, &Fault::status(503, 1)).unwrap();
        faults.inject(Service::Ua, Some("/ua/v1/sweeps"), &Fault::status(429, 1)).unwrap();
        assert_eq!(faults.pending().len(), 2);
        assert_eq!(faults.pending()[1]["path"], "/v1/sweeps");
        assert_eq!(faults.take(Service::Signer, "/v1/sign"), Planned::default());
        assert_eq!(faults.take(Service::Ua, "/v1/sweeps/send").status, Some((429, None)));
        assert_eq!(faults.take(Service::Ua, "/v1/sweeps/send").status, Some((503, None)));
        assert_eq!(faults.take(Service::Ua, "/v1/sweeps/send"), Planned::default());
        faults
            .inject(Service::Jwt, Some("/v1/jwt"), &Fault::delay(Duration::from_millis(1), 1))
            .unwrap();
        assert_eq!(faults.take(Service::Jwt, "/.well-known/jwks.json"), Planned::default());
        assert!(faults.inject(Service::Jwt, Some("v1"), &Fault::status(500, 1)).is_err());
        assert!(faults.inject(Service::Jwt, None, &Fault::default()).is_err());
        faults.clear();
        assert!(faults.pending().is_empty());
    }

    #[test]
    fn sweep_faults_count_down() {
        let faults = SweepFaults::default();
        faults.arm(SweepFaultMode::Reject, 2);
        assert_eq!(faults.pending().unwrap()["mode"], "reject");
        assert_eq!(faults.take(), Some(SweepFaultMode::Reject));
        assert_eq!(faults.take(), Some(SweepFaultMode::Reject));
        assert_eq!(faults.take(), None);
        let parsed: FaultRequest =
            serde_json::from_str(r#"{"service": "user-rpc", "status": 500}"#).unwrap();
        assert_eq!(parsed.service, Some(Service::UserRpc));
        assert!(serde_json::from_str::<FaultRequest>(r#"{"service": "x"}"#).is_err());
    }
}
