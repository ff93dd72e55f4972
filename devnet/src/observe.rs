//! Operating endpoints: `GET /metrics` (Prometheus text: the server's requests by route and
//! status, then the depositkit client metrics of this process), `GET /healthz` (the process
//! answers) and `GET /readyz` (its store answers: 503 otherwise).

use std::sync::{Arc, LazyLock};
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::http::AppState;

type Labels = Vec<(&'static str, String)>;

struct ServerMetrics {
    registry: Registry,
    requests: Family<Labels, Counter>,
    latency: Family<Labels, Histogram, fn() -> Histogram>,
}

fn histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 14))
}

static METRICS: LazyLock<ServerMetrics> = LazyLock::new(|| {
    let mut registry = Registry::with_prefix("depositkit_devnet");
    let requests = Family::<Labels, Counter>::default();
    let latency = Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(
        histogram as fn() -> Histogram,
    );
    registry.register("http_requests", "Requests served, by route and status", requests.clone());
    registry.register(
        "http_request_duration_seconds",
        "Time to answer each request, by route",
        latency.clone(),
    );
    ServerMetrics { registry, requests, latency }
});

/// The routes (with the app's state).
pub(crate) fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

/// Counts every request by its route's pattern (never the concrete path: no ids in labels) and
/// status.
pub(crate) async fn count_requests(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let started = Instant::now();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    let m = &*METRICS;
    m.requests.get_or_create(&vec![("route", route.clone()), ("status", status)]).inc();
    m.latency.get_or_create(&vec![("route", route)]).observe(started.elapsed().as_secs_f64());
    response
}

/// The server's metrics in the Prometheus text format, then the process's depositkit client
/// metrics.
pub fn metrics_text() -> String {
    let mut open = String::new();
    let _ = encode(&mut open, &METRICS.registry);
    let mut counters = Vec::new();
    for line in open.lines() {
        if let Some(name) = line.strip_prefix("# TYPE ").and_then(|r| r.strip_suffix(" counter")) {
            counters.push(name.to_owned());
        }
    }
    let mut out = String::new();
    for line in open.lines().filter(|l| *l != "# EOF" && !l.starts_with("# UNIT ")) {
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let (name, tail) = line.strip_prefix(prefix)?.split_once(' ')?;
            counters.iter().any(|c| c == name).then(|| format!("{prefix}{name}_total {tail}"))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out.push_str(&depositkit_core::metrics_text());
    out
}

async fn metrics() -> Response {
    ([(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], metrics_text()).into_response()
}

async fn healthz() -> Response {
    (StatusCode::OK, axum::Json(serde_json::json!({ "status": "ok" }))).into_response()
}

async fn readyz(State(app): State<Arc<AppState>>) -> Response {
    let store = app.store.clone();
    let ready = tokio::task::spawn_blocking(move || store.meta("schema_version").is_ok())
        .await
        .unwrap_or(false);
    if ready {
        (StatusCode::OK, axum::Json(serde_json::json!({ "status": "ready" }))).into_response()
    } else {
        let body =
            serde_json::json!({ "status": "not ready", "reason": "the store does not answer" });
        (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response()
    }
}
