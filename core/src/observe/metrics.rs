//! The process's metric registry and the calls that update it.

use std::sync::LazyLock;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

/// Latencies of HTTP requests and polls: 5 ms to ~41 s.
fn short_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 14))
}

/// Latencies of sweeps and refunds (detection to delivery): 1 s to ~4.5 h.
fn long_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.0, 15))
}

struct Metrics {
    registry: Registry,
    detected: Family<Labels, Counter>,
    credited: Family<Labels, Counter>,
    refunded: Family<Labels, Counter>,
    failed: Family<Labels, Counter>,
    sweep_latency: Histogram,
    refund_latency: Histogram,
    polls: Family<Labels, Counter>,
    poll_latency: Histogram,
    backlog: Gauge,
    stuck: Gauge,
    http_requests: Family<Labels, Counter>,
    http_latency: Histograms,
    http_retries: Family<Labels, Counter>,
    retries: Family<Labels, Counter>,
    events_delivered: Counter,
    events_dropped: Counter,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    let mut registry = Registry::with_prefix("depositkit");
    let m = Metrics {
        detected: Family::default(),
        credited: Family::default(),
        refunded: Family::default(),
        failed: Family::default(),
        sweep_latency: long_histogram(),
        refund_latency: long_histogram(),
        polls: Family::default(),
        poll_latency: short_histogram(),
        backlog: Gauge::default(),
        stuck: Gauge::default(),
        http_requests: Family::default(),
        http_latency: Family::new_with_constructor(short_histogram as fn() -> Histogram),
        http_retries: Family::default(),
        retries: Family::default(),
        events_delivered: Counter::default(),
        events_dropped: Counter::default(),
        registry: Registry::default(),
    };
    let r = &mut registry;
    r.register(
        "deposits_detected",
        "Deposits detected, by source chain and token",
        m.detected.clone(),
    );
    r.register(
        "deposits_credited",
        "Deposits credited to their destination, by source chain and token",
        m.credited.clone(),
    );
    r.register(
        "deposits_refunded",
        "Deposits refunded, by source chain and token",
        m.refunded.clone(),
    );
    r.register(
        "deposits_failed",
        "Sweeps of deposits that failed for good, by source chain and token",
        m.failed.clone(),
    );
    r.register(
        "sweep_latency_seconds",
        "Detection to credit of each credited deposit",
        m.sweep_latency.clone(),
    );
    r.register(
        "refund_latency_seconds",
        "Detection to refund of each refunded deposit",
        m.refund_latency.clone(),
    );
    r.register("polls", "Balance polls, by outcome (ok, error)", m.polls.clone());
    r.register("poll_latency_seconds", "Duration of each balance poll", m.poll_latency.clone());
    r.register(
        "backlog_deposits",
        "Deposits in the tables of this process's clients (detected, not yet credited or refunded)",
        m.backlog.clone(),
    );
    r.register(
        "stuck_deposits",
        "Deposits in a table for longer than the stuck threshold (15 min)",
        m.stuck.clone(),
    );
    r.register(
        "http_requests",
        "HTTP requests, by service and status (a code, or timeout / network)",
        m.http_requests.clone(),
    );
    r.register(
        "http_request_duration_seconds",
        "Duration of each HTTP request, by service",
        m.http_latency.clone(),
    );
    r.register(
        "http_retries",
        "HTTP requests retried (429, 5xx, transport failures), by service",
        m.http_retries.clone(),
    );
    r.register(
        "retries",
        "Sweep and refund attempts scheduled again after a failure, by purpose",
        m.retries.clone(),
    );
    r.register(
        "events_delivered",
        "Events handed to the hosts' queues and callbacks",
        m.events_delivered.clone(),
    );
    r.register("events_dropped", "Events dropped from a full pull queue", m.events_dropped.clone());
    Metrics { registry, ..m }
});

fn deposit_labels(chain_id: u64, token: &str) -> Labels {
    vec![("chain", chain_id.to_string()), ("token", token.to_owned())]
}

/// A deposit entered a client's table.
pub(crate) fn deposit_detected(chain_id: u64, token: &str) {
    METRICS.detected.get_or_create(&deposit_labels(chain_id, token)).inc();
}

/// A deposit left its table credited (`refunded: false`) or refunded, `detected_at_ms` after
/// its detection.
pub(crate) fn deposit_ended(chain_id: u64, token: &str, refunded: bool, detected_at_ms: u64) {
    let m = &*METRICS;
    let labels = deposit_labels(chain_id, token);
    let (count, latency) =
        if refunded { (&m.refunded, &m.refund_latency) } else { (&m.credited, &m.sweep_latency) };
    count.get_or_create(&labels).inc();
    latency.observe(super::now_ms().saturating_sub(detected_at_ms) as f64 / 1000.0);
}

/// A deposit's sweep failed for good.
pub(crate) fn deposit_failed(chain_id: u64, token: &str) {
    METRICS.failed.get_or_create(&deposit_labels(chain_id, token)).inc();
}

/// An attempt (`purpose`: sweep or refund) failed and will be tried again.
pub(crate) fn deposit_retry(purpose: &'static str) {
    METRICS.retries.get_or_create(&vec![("purpose", purpose.to_owned())]).inc();
}

/// A balance poll ended after `took`.
pub(crate) fn poll_finished(ok: bool, took: Duration) {
    let outcome = if ok { "ok" } else { "error" };
    METRICS.polls.get_or_create(&vec![("outcome", outcome.to_owned())]).inc();
    METRICS.poll_latency.observe(took.as_secs_f64());
}

/// An HTTP request to `service` ended with `status` (a code, or `timeout` / `network`).
pub(crate) fn http_request(service: &str, status: &str, took: Duration) {
    let m = &*METRICS;
    m.http_requests
        .get_or_create(&vec![("service", service.to_owned()), ("status", status.to_owned())])
        .inc();
    m.http_latency
        .get_or_create(&vec![("service", service.to_owned())])
        .observe(took.as_secs_f64());
}

/// A request to `service` is retried.
pub(crate) fn http_retry(service: &str) {
    METRICS.http_retries.get_or_create(&vec![("service", service.to_owned())]).inc();
}

/// An event went to a host's queue or callbacks.
pub(crate) fn event_delivered() {
    METRICS.events_delivered.inc();
}

/// An event fell off a full pull queue.
pub(crate) fn event_dropped() {
    METRICS.events_dropped.inc();
}

/// The service a URL belongs to, as a label: the path segment naming one of the protocol's
/// services (`jwt`, `signer`, `ua`, `user-rpc`, `particle`; `jwks` for the key set), else the
/// URL's host and port (a chain node, a proxy). Never the path's ids or the query.
pub(crate) fn service_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = path.split(['?', '#']).next().unwrap_or("");
    if path.ends_with(".well-known/jwks.json") {
        return "jwks".into();
    }
    const KNOWN: [&str; 6] = ["jwt", "signer", "ua", "user-rpc", "particle", "balances"];
    if let Some(known) = path.split('/').find(|s| KNOWN.contains(s)) {
        return known.to_owned();
    }
    // Credentials in a URL never reach a label.
    host.rsplit('@').next().unwrap_or(host).to_owned()
}

/// Every metric of the process in the Prometheus text exposition format (version 0.0.4, what
/// `GET /metrics` answers with `Content-Type: text/plain; version=0.0.4`). The backlog and stuck
/// gauges are read from the live clients at this moment.
pub fn metrics_text() -> String {
    let m = &*METRICS;
    let (backlog, stuck) = super::health::backlog_of_sources(super::DEFAULT_STUCK_AFTER_MS);
    m.backlog.set(i64::try_from(backlog).unwrap_or(i64::MAX));
    m.stuck.set(i64::try_from(stuck).unwrap_or(i64::MAX));
    let mut open = String::new();
    if encode(&mut open, &m.registry).is_err() {
        return String::new();
    }
    to_prometheus_text(&open)
}

/// OpenMetrics text (prometheus-client's) as Prometheus text: a counter's family is named with
/// its `_total` suffix, as its samples are, and there is no `# EOF`.
fn to_prometheus_text(open: &str) -> String {
    let mut counters = Vec::new();
    for line in open.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ")
            && let Some(name) = rest.strip_suffix(" counter")
        {
            counters.push(name.to_owned());
        }
    }
    let mut out = String::with_capacity(open.len());
    for line in open.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters.iter().any(|c| c == name).then(|| format!("{prefix}{name}_total {tail}"))
        });
        match renamed {
            Some(line) => out.push_str(&line),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_are_named_without_ids_or_credentials() {
        assert_eq!(service_of("http://127.0.0.1:9/ua/v1/sweeps/q-1"), "ua");
        assert_eq!(service_of("http://h/jwt/.well-known/jwks.json"), "jwks");
        assert_eq!(service_of("https://u:p@node.example:8545/x?k=1"), "node.example:8545");
        assert_eq!(service_of("http://h:1/user-rpc"), "user-rpc");
    }

    #[test]
    fn counters_become_prometheus_families() {
        deposit_detected(8453, "USDC");
        let text = metrics_text();
        assert!(text.contains("# TYPE depositkit_deposits_detected_total counter"), "{text}");
        assert!(text.contains("depositkit_deposits_detected_total{chain=\"8453\",token=\"USDC\"}"));
        assert!(!text.contains("# EOF"));
    }
}
