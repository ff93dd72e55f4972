//! The admin HTTP API: what an application's backend calls to provision users as they sign up
//! (the CLI's admin commands, over HTTP). Served only with `--admin-listen`, on a listener of its
//! own (keep it on a private interface), and only to `Authorization: Bearer <admin token>`
//! (`DEPOSITKIT_ADMIN_TOKEN`; compared by hash in constant time, never logged).
//!
//! | Method and path | Body | Answer |
//! |---|---|---|
//! | `POST /admin/projects` | `{"name"}` | 201 `{"projectId","serverKey"}` (the key only now) |
//! | `POST /admin/projects/{project}/rotate-key` | — | 200 `{"projectId","serverKey"}` |
//! | `POST /admin/projects/{project}/users` | a User record (as in an import file, with optional `wallets`, `identities`, `sessions`) | 201 `{"uuid"}` |
//! | `GET /admin/projects/{project}/users` | — | 200 `{"uuids": [...]}` oldest first |
//! | `GET /admin/projects/{project}/users/{uuid}` | — | 200 the User record |
//! | `POST /admin/projects/{project}/import` | an array of User records | 200 `{"uuids"}` (all or nothing) |
//! | `POST /admin/projects/{project}/interactions` | `{"chain","address"}` | 204 |
//! | `POST /admin/users/{uuid}/wallets` | `{"chain","publicAddress"}` | 204 |
//! | `POST /admin/users/{uuid}/identities` | `{"provider","uid"}` | 204 |
//! | `POST /admin/users/{uuid}/sessions` | `{"ttlSeconds"?, "token"?}` | 201 `{"token"}` (only now) |
//!
//! Errors are `{"error": "<message naming the bad value>"}` with 400 (bad input), 401, 404
//! (unknown project or user), 409 (taken uuid, identity or token), 413, 500.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::Error;
use crate::http::{BodyError, json_response, read_body};
use crate::records::ChainFamily;
use crate::secret;
use crate::store::UserStore;

/// The environment variable holding the admin token.
pub const ADMIN_TOKEN_ENV: &str = "DEPOSITKIT_ADMIN_TOKEN";
/// Shortest accepted admin token.
pub const MIN_TOKEN_CHARS: usize = 24;
/// Default session lifetime of `POST /admin/users/{uuid}/sessions`.
const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(86_400);

struct AdminState {
    store: UserStore,
    token_hash: [u8; 32],
    max_body_bytes: usize,
}

/// The admin routes, answering only to `token`.
///
/// # Errors
/// [`Error::InvalidInput`] for a token shorter than [`MIN_TOKEN_CHARS`].
pub fn router(store: UserStore, token: &str, max_body_bytes: usize) -> Result<Router, Error> {
    if token.chars().count() < MIN_TOKEN_CHARS {
        return Err(Error::invalid(
            ADMIN_TOKEN_ENV,
            format!("the admin token must be at least {MIN_TOKEN_CHARS} characters"),
        ));
    }
    let state = Arc::new(AdminState { store, token_hash: secret::hash(token), max_body_bytes });
    Ok(Router::new()
        .route("/admin/projects", post(create_project))
        .route("/admin/projects/{project}/rotate-key", post(rotate_key))
        .route("/admin/projects/{project}/users", post(add_user).get(list_users))
        .route("/admin/projects/{project}/users/{uuid}", get(show_user))
        .route("/admin/projects/{project}/import", post(import))
        .route("/admin/projects/{project}/interactions", post(add_interaction))
        .route("/admin/users/{uuid}/wallets", post(add_wallet))
        .route("/admin/users/{uuid}/identities", post(add_identity))
        .route("/admin/users/{uuid}/sessions", post(add_session))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&state), require_token))
        .fallback(|| async { failure(StatusCode::NOT_FOUND, "no such admin route".into()) })
        .with_state(state))
}

/// 401 unless the request carries the admin token.
async fn require_token(
    State(app): State<Arc<AdminState>>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|token| secret::hash(token.trim()));
    let allowed = presented.is_some_and(|hash| secret::hashes_equal(&hash, &app.token_hash));
    if allowed {
        return next.run(request).await;
    }
    let mut response = failure(
        StatusCode::UNAUTHORIZED,
        "the admin API needs Authorization: Bearer <admin token>".into(),
    );
    response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// The body as JSON of type `T`, or the error response.
async fn body<T: for<'de> Deserialize<'de>>(
    app: &AdminState,
    request: Request,
) -> Result<T, Response> {
    let (parts, body) = request.into_parts();
    let bytes = read_body(&parts.headers, body, app.max_body_bytes).await.map_err(|e| match e {
        BodyError::TooLarge => failure(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is larger than {} bytes", app.max_body_bytes),
        ),
        BodyError::Unreadable(e) => {
            failure(StatusCode::BAD_REQUEST, format!("cannot read the body: {e}"))
        }
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        failure(StatusCode::BAD_REQUEST, format!("the body is not the expected JSON: {e}"))
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewProject {
    name: String,
}

async fn create_project(State(app): State<Arc<AdminState>>, request: Request) -> Response {
    let project: NewProject = match body(&app, request).await {
        Ok(project) => project,
        Err(response) => return response,
    };
    respond(StatusCode::CREATED, app.store.create_project(&project.name).await.map(|c| json!(c)))
}

async fn rotate_key(State(app): State<Arc<AdminState>>, Path(project): Path<String>) -> Response {
    respond(StatusCode::OK, app.store.rotate_server_key(&project).await.map(|c| json!(c)))
}

async fn add_user(
    State(app): State<Arc<AdminState>>,
    Path(project): Path<String>,
    request: Request,
) -> Response {
    let record: Value = match body(&app, request).await {
        Ok(record) => record,
        Err(response) => return response,
    };
    // One record of an import: the user with its wallets, identities and sessions at once.
    let added = app.store.import_users(&project, &Value::Array(vec![record])).await;
    let added = added.map_err(|e| match e {
        Error::ImportRecord { source, .. } => *source,
        other => other,
    });
    respond(StatusCode::CREATED, added.map(|uuids| json!({ "uuid": uuids.first() })))
}

async fn list_users(State(app): State<Arc<AdminState>>, Path(project): Path<String>) -> Response {
    let uuids = match crate::records::normalize_uuid("project", &project) {
        Ok(project) => app.store.user_uuids(&project).await,
        Err(e) => Err(e),
    };
    respond(StatusCode::OK, uuids.map(|uuids| json!({ "uuids": uuids })))
}

async fn show_user(
    State(app): State<Arc<AdminState>>,
    Path((project, uuid)): Path<(String, String)>,
) -> Response {
    let found = async {
        let project = crate::records::normalize_uuid("project", &project)?;
        let uuid = crate::records::normalize_uuid("uuid", &uuid)?;
        match app.store.user(&project, &uuid).await? {
            Some(user) => Ok(json!(user)),
            None => Err(Error::NotFound(format!("user {uuid} not found in project {project}"))),
        }
    };
    respond(StatusCode::OK, found.await)
}

async fn import(
    State(app): State<Arc<AdminState>>,
    Path(project): Path<String>,
    request: Request,
) -> Response {
    let records: Value = match body(&app, request).await {
        Ok(records) => records,
        Err(response) => return response,
    };
    let imported = app.store.import_users(&project, &records).await;
    respond(StatusCode::OK, imported.map(|uuids| json!({ "uuids": uuids })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Interaction {
    chain: String,
    address: String,
}

async fn add_interaction(
    State(app): State<Arc<AdminState>>,
    Path(project): Path<String>,
    request: Request,
) -> Response {
    let interaction: Interaction = match body(&app, request).await {
        Ok(interaction) => interaction,
        Err(response) => return response,
    };
    let added = async {
        let chain = ChainFamily::parse_field("chain", &interaction.chain)?;
        app.store.add_interaction(&project, chain, &interaction.address).await
    };
    respond(StatusCode::NO_CONTENT, added.await.map(|()| Value::Null))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewWallet {
    chain: String,
    public_address: String,
}

async fn add_wallet(
    State(app): State<Arc<AdminState>>,
    Path(uuid): Path<String>,
    request: Request,
) -> Response {
    let wallet: NewWallet = match body(&app, request).await {
        Ok(wallet) => wallet,
        Err(response) => return response,
    };
    let added = async {
        let chain = ChainFamily::parse_field("chain", &wallet.chain)?;
        app.store.add_wallet(&uuid, chain, &wallet.public_address).await
    };
    respond(StatusCode::NO_CONTENT, added.await.map(|()| Value::Null))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewIdentity {
    provider: String,
    uid: String,
}

async fn add_identity(
    State(app): State<Arc<AdminState>>,
    Path(uuid): Path<String>,
    request: Request,
) -> Response {
    let identity: NewIdentity = match body(&app, request).await {
        Ok(identity) => identity,
        Err(response) => return response,
    };
    let added = app.store.add_identity(&uuid, &identity.provider, &identity.uid).await;
    respond(StatusCode::NO_CONTENT, added.map(|()| Value::Null))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewSession {
    ttl_seconds: Option<i64>,
    token: Option<String>,
}

async fn add_session(
    State(app): State<Arc<AdminState>>,
    Path(uuid): Path<String>,
    request: Request,
) -> Response {
    let session: NewSession = match body(&app, request).await {
        Ok(session) => session,
        Err(response) => return response,
    };
    let now = SystemTime::now();
    let expires_at = match session.ttl_seconds {
        None => now + DEFAULT_SESSION_TTL,
        Some(ttl) if ttl >= 0 => now + Duration::from_secs(ttl.unsigned_abs()),
        Some(ttl) => now - Duration::from_secs(ttl.unsigned_abs()),
    };
    let added = app.store.add_session(&uuid, session.token.as_deref(), expires_at).await;
    respond(StatusCode::CREATED, added.map(|token| json!({ "token": token })))
}

/// `value` with `status`, or the error's status and message.
fn respond(status: StatusCode, outcome: Result<Value, Error>) -> Response {
    match outcome {
        Ok(_) if status == StatusCode::NO_CONTENT => status.into_response(),
        Ok(value) => json_response(status, &value),
        Err(error) => {
            let status = match &error {
                Error::InvalidInput { .. } | Error::ImportRecord { .. } | Error::Json { .. } => {
                    StatusCode::BAD_REQUEST
                }
                Error::NotFound(_) => StatusCode::NOT_FOUND,
                Error::Conflict(_) => StatusCode::CONFLICT,
                _ => {
                    eprintln!("depositkit-server: admin API: {error}");
                    return failure(StatusCode::INTERNAL_SERVER_ERROR, "internal error".into());
                }
            };
            failure(status, error.to_string())
        }
    }
}

fn failure(status: StatusCode, message: String) -> Response {
    json_response(status, &json!({ "error": message }))
}
