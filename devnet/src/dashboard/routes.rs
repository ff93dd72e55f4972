//! The dashboard's HTTP face, under `/dashboard`: the page and its two assets (compiled into the
//! binary), the state, the event stream (server-sent events), the forms' endpoints and the
//! chain-backed transaction view.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use http_body_util::channel::Channel;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{controls, view};
use crate::http::AppState;
use crate::services::api::{ApiError, ApiResult, blocking, read_json, reply};

/// Where the dashboard is served.
pub const PATH: &str = "/dashboard/";

/// How often a connected page's stream looks for new rows in the store.
const TICK: Duration = Duration::from_millis(250);
/// A comment line keeps an idle stream (and any proxy in between) open this often.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const STYLE_CSS: &str = include_str!("assets/style.css");
/// Only the page's own origin: nothing is loaded from anywhere else.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' \
                   data:; connect-src 'self'; base-uri 'none'; form-action 'self'; \
                   frame-ancestors 'none'";

/// The dashboard's routes.
pub(crate) fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/dashboard", get(|| async { Redirect::permanent(PATH) }))
        .route(PATH, get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }))
        .route(
            "/dashboard/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/dashboard/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
        .route("/dashboard/api/state", get(state))
        .route("/dashboard/api/events", get(events))
        .route("/dashboard/api/deposits", post(deposit))
        .route("/dashboard/api/faults", post(arm_fault).delete(clear_faults))
        .route("/dashboard/api/chain-tx", get(chain_tx))
}

fn asset(content_type: &'static str, text: &'static str) -> Response {
    let mut response = text.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers
        .insert(HeaderName::from_static("content-security-policy"), HeaderValue::from_static(CSP));
    headers.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// `GET /dashboard/api/state`: the state, the catalog and every event kept.
async fn state(State(app): State<Arc<AppState>>) -> Response {
    reply(
        blocking(move || {
            let activity = &app.services.activity;
            activity.sync(&app.services.store).map_err(ApiError::internal)?;
            let mut state = view::state(&app)?;
            state["catalog"] = view::catalog();
            state["events"] = json!(activity.since(0));
            Ok(state)
        })
        .await,
    )
}

#[derive(Deserialize)]
struct StreamQuery {
    after: Option<u64>,
}

/// `GET /dashboard/api/events?after=N`: a server-sent event stream of the events numbered above
/// `N` (or the `Last-Event-ID` a reconnecting `EventSource` sends), each `event: activity` with
/// its number as `id`, and `event: state` whenever the state changes.
async fn events(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
    query: Result<Query<StreamQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else {
        return reply(Err(ApiError::invalid("after: expected the number of an event")));
    };
    let resumed = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let after = resumed.or(query.after).unwrap_or(0);
    let (sender, body) = Channel::<Bytes, Infallible>::new(16);
    tokio::spawn(stream(app, after, sender));
    let mut response = Response::new(Body::new(body));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Feeds one page's stream until the page goes away.
async fn stream(
    app: Arc<AppState>,
    mut after: u64,
    mut sender: http_body_util::channel::Sender<Bytes, Infallible>,
) {
    let mut changes = app.services.activity.subscribe();
    let mut last_state = String::new();
    let mut last_sent = Instant::now();
    while !app.services.activity.is_closed() {
        let reader = Arc::clone(&app);
        let state = blocking(move || {
            reader.services.activity.sync(&reader.services.store).map_err(ApiError::internal)?;
            view::state(&reader)
        })
        .await;
        // What happened first, then the state it led to.
        let mut out = String::new();
        for event in app.services.activity.since(after) {
            after = event["seq"].as_u64().unwrap_or(after);
            out.push_str(&format!("id: {after}\nevent: activity\ndata: {event}\n\n"));
        }
        match state {
            Ok(state) => {
                let state = state.to_string();
                if state != last_state {
                    out.push_str(&format!("event: state\ndata: {state}\n\n"));
                    last_state = state;
                }
            }
            // The page keeps what it has; the failure is said once per tick.
            Err(error) => {
                out.push_str(&format!("event: failure\ndata: {}\n\n", json!(error.message)));
            }
        }
        if out.is_empty() && last_sent.elapsed() >= KEEP_ALIVE {
            out.push_str(": keep-alive\n\n");
        }
        if !out.is_empty() {
            if sender.send_data(Bytes::from(out)).await.is_err() {
                return;
            }
            last_sent = Instant::now();
        }
        tokio::select! {
            _ = changes.changed() => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
}

/// `POST /dashboard/api/deposits`: see [`controls::deposit`].
async fn deposit(State(app): State<Arc<AppState>>, body: Body) -> Response {
    let result = async {
        let form: controls::DepositForm = read_json(body, app.max_body_bytes).await?;
        blocking(move || controls::deposit(&app.services, &form)).await
    };
    reply(result.await)
}

/// `POST /dashboard/api/faults`: see [`controls::arm_fault`].
async fn arm_fault(State(app): State<Arc<AppState>>, body: Body) -> Response {
    let result = async {
        let form: Value = read_json(body, app.max_body_bytes).await?;
        let message = controls::arm_fault(&app, form)?;
        app.services
            .activity
            .push(json!({ "kind": "faults", "action": "armed", "message": message }));
        Ok(json!({ "message": message }))
    };
    reply(result.await)
}

/// `DELETE /dashboard/api/faults`: every fault disarmed.
async fn clear_faults(State(app): State<Arc<AppState>>) -> Response {
    let result = controls::clear_faults(&app).map(|message| {
        app.services
            .activity
            .push(json!({ "kind": "faults", "action": "cleared", "message": message }));
        json!({ "message": message })
    });
    reply(result)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChainTxQuery {
    chain_id: u64,
    hash: String,
}

/// `GET /dashboard/api/chain-tx?chainId=…&hash=…`: see [`view::chain_transaction`].
async fn chain_tx(
    State(app): State<Arc<AppState>>,
    query: Result<Query<ChainTxQuery>, QueryRejection>,
) -> Response {
    let result: ApiResult = async {
        let Query(query) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
        blocking(move || view::chain_transaction(&app, query.chain_id, &query.hash)).await
    }
    .await;
    let mut response = reply(result);
    if response.status() == StatusCode::OK {
        response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}
