//! `depositkit-server` as a real process: admin commands, JSON-RPC over HTTP on 127.0.0.1, two
//! instances on one PostgreSQL database, the body limit, graceful shutdown, and the errors of a
//! database with the wrong schema version or out of reach.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Backend, Database, EVM, SOL, Server, admin, call, get, open, run, runtime};
use serde_json::{Value, json};

#[test]
fn admin_commands_then_serve_on_sqlite() {
    let db = Database::new(Backend::Sqlite);
    let url = db.url();
    let (code, out, err) = run(&url, &["project", "create", "--name", "shop"]);
    assert_eq!(code, 0, "{err}");
    let credentials: Value = serde_json::from_str(out.trim()).unwrap();
    let (project, key) =
        (credentials["projectId"].as_str().unwrap(), credentials["serverKey"].as_str().unwrap());
    let (code, out, err) =
        run(&url, &["user", "add", "--project", project, "--email", "a@b.c", "--google-id", "g1"]);
    assert_eq!(code, 0, "{err}");
    let user = out.trim().to_owned();
    for args in [
        vec!["wallet", "add", "--user", &user, "--chain", "evm_chain", "--address", EVM],
        vec!["identity", "add", "--user", &user, "--uid", "uid-1"],
    ] {
        let (code, _, err) = run(&url, &args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    let (code, token, err) = run(&url, &["session", "add", "--user", &user]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = run(&url, &["user", "list", "--project", project]);
    assert_eq!((code, out.trim()), (0, user.as_str()));
    // Bad input: exit 1 and a message naming the value.
    let (code, _, err) =
        run(&url, &["wallet", "add", "--user", &user, "--chain", "solana", "--address", "nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("\"nope\" is not a valid solana address"), "{err}");

    let server = Server::start(&url, &[]);
    let reply = call(&server.rpc_url(), project, key, "getUserInfo", json!([user, token.trim()]));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["result"]["googleId"], "g1");
    let reply = call(&server.rpc_url(), project, key, "isProjectUser", json!(["evm_chain", EVM]));
    assert_eq!(reply.json()["result"], true);
    assert_eq!(get(&format!("{}/healthz", server.base_url)).status, 200);
    assert_eq!(get(&format!("{}/devnet/faults", server.base_url)).status, 404);
    let (status, stderr) = server.stop(libc::SIGTERM);
    assert_eq!(status.code(), Some(0), "{stderr}");
    for secret in [key, token.trim()] {
        assert!(!stderr.contains(secret), "secret logged: {stderr}");
    }
}

#[test]
fn two_instances_on_one_postgres_database_share_projects_and_users() {
    let db = Database::new(Backend::Postgres);
    let admin_flag = ["--admin-listen", "127.0.0.1:0"];
    let (a, b) = (Server::start(&db.url(), &admin_flag), Server::start(&db.url(), &admin_flag));
    let (admin_a, admin_b) = (a.admin_url.clone().unwrap(), b.admin_url.clone().unwrap());

    let created =
        admin("POST", &format!("{admin_a}/admin/projects"), Some(json!({"name": "shop"})));
    assert_eq!(created.status, 201, "{}", created.body);
    let credentials = created.json();
    let (project, key) =
        (credentials["projectId"].as_str().unwrap(), credentials["serverKey"].as_str().unwrap());
    // A user added through A ...
    let user = json!({"email": "a@b.c", "wallets": [{"chain": "solana", "publicAddress": SOL}],
                      "identities": [{"provider": "jwt", "uid": "uid-1"}]});
    let added = admin("POST", &format!("{admin_a}/admin/projects/{project}/users"), Some(user));
    assert_eq!(added.status, 201, "{}", added.body);
    let uuid = added.json()["uuid"].as_str().unwrap().to_owned();
    // ... is visible through B at once.
    let reply = call(&b.rpc_url(), project, key, "getUserInfoByIdentity", json!(["jwt", "uid-1"]));
    assert_eq!(reply.json()["result"]["uuid"], uuid.as_str(), "{}", reply.body);
    assert_eq!(
        call(&b.rpc_url(), project, key, "isProjectUser", json!(["solana", SOL])).json()["result"],
        true
    );
    let session = admin("POST", &format!("{admin_b}/admin/users/{uuid}/sessions"), Some(json!({})));
    let token = session.json()["token"].as_str().unwrap().to_owned();
    let reply = call(&a.rpc_url(), project, key, "getUserInfo", json!([uuid, token]));
    assert_eq!(reply.json()["result"]["email"], "a@b.c", "{}", reply.body);
    // A key rotated through B stops working on A at once.
    let rotated = admin("POST", &format!("{admin_b}/admin/projects/{project}/rotate-key"), None);
    let new_key = rotated.json()["serverKey"].as_str().unwrap().to_owned();
    assert_eq!(
        call(&a.rpc_url(), project, key, "isProjectUser", json!(["solana", SOL])).status,
        401
    );
    assert_eq!(
        call(&a.rpc_url(), project, &new_key, "isProjectUser", json!(["solana", SOL])).status,
        200
    );
    // The admin API refuses bad input with the value named, and anyone without the token.
    let bad = admin(
        "POST",
        &format!("{admin_a}/admin/users/{uuid}/wallets"),
        Some(json!({"chain": "evm_chain", "publicAddress": "0x12"})),
    );
    assert_eq!(bad.status, 400);
    assert!(bad.json()["error"].as_str().unwrap().contains("\"0x12\""), "{}", bad.body);
    let anonymous =
        common::agent().get(&format!("{admin_a}/admin/projects/{project}/users")).call().unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    // The admin API is not on the public port.
    assert_eq!(get(&format!("{}/admin/projects/{project}/users", a.base_url)).status, 404);
}

#[test]
fn a_body_over_the_limit_is_413() {
    let db = Database::new(Backend::Sqlite);
    let server = Server::start(&db.url(), &["--max-body-bytes", "1024"]);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "x", "pad": "y".repeat(2000)});
    let reply = common::post(&server.rpc_url(), None, &body.to_string());
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json()["error"]["data"]["maxBodyBytes"], 1024);
}

#[test]
fn sigterm_lets_an_in_flight_request_finish() {
    let db = Database::new(Backend::Postgres);
    let runtime = runtime();
    let store = open(&runtime, &db);
    let credentials = runtime.block_on(store.create_project("shop")).unwrap();
    store.close();
    let server = Server::start(&db.url(), &[]);
    let addr = server.base_url.trim_start_matches("http://").to_owned();

    // A request whose body is not all sent yet: the server is handling it once it says
    // "100 Continue" (it does when the handler starts reading the body).
    let body =
        json!({"jsonrpc": "2.0", "id": 9, "method": "isProjectUser", "params": ["solana", SOL]})
            .to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let mut stream = TcpStream::connect(&addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let auth = common::basic(&credentials.project_id, &credentials.server_key);
    write!(
        stream,
        "POST /user-rpc HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n{first}",
        body.len()
    )
    .unwrap();
    let mut continued = [0u8; 25];
    stream.read_exact(&mut continued).unwrap();
    assert!(String::from_utf8_lossy(&continued).starts_with("HTTP/1.1 100 Continue"));

    // SIGTERM: the server stops accepting connections ...
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(server.pid(), libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(&addr).is_ok() {
        assert!(Instant::now() < deadline, "still accepting connections after SIGTERM");
        std::thread::yield_now();
    }
    // ... and the request in flight still gets its answer.
    stream.write_all(rest.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""id":9"#) && answer.contains(r#""result":false"#), "{answer}");
    let (status, stderr) = server.stop(0);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("SIGTERM"), "{stderr}");
}

#[test]
fn a_database_with_another_schema_version_is_refused_naming_both_versions() {
    let db = Database::new(Backend::Postgres);
    let runtime = runtime();
    runtime.block_on(depositkit_server::UserStore::open(&db.url(), 1)).unwrap().close();
    let common::Database::Postgres(pg) = &db else { unreachable!("a PostgreSQL database") };
    pg.execute("UPDATE user_lookup_schema SET version = 99");
    let (code, _, err) = run(&db.url(), &["serve", "--listen", "127.0.0.1:0"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "has user-lookup schema version 99, but this build reads and writes version 1"
        ),
        "{err}"
    );
    assert!(err.contains(&db.url()), "{err} does not name the database");

    let sqlite = Database::new(Backend::Sqlite);
    let common::Database::Sqlite(file) = &sqlite else { unreachable!("a SQLite file") };
    let conn = rusqlite::Connection::open(&file.0).unwrap();
    conn.execute_batch("CREATE TABLE user_lookup_schema (version INTEGER NOT NULL); INSERT INTO user_lookup_schema VALUES (2);").unwrap();
    drop(conn);
    let (code, _, err) =
        run(&sqlite.url(), &["user", "list", "--project", "00000000-0000-4000-8000-000000000000"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("user-lookup schema version 2, but this build reads and writes version 1"),
        "{err}"
    );
}

#[test]
fn an_unreachable_database_is_named_without_its_password() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://app:s3cret-pw@127.0.0.1:{port}/users");
    let (code, _, err) = run(&url, &["serve", "--listen", "127.0.0.1:0"]);
    assert_eq!(code, 1, "{err}");
    let shown = format!("cannot connect to database postgres://app:***@127.0.0.1:{port}/users");
    assert!(err.contains(&shown), "{err}");
    assert!(!err.contains("s3cret-pw"), "password shown: {err}");
    let (code, _, err) = run("mysql://u:pw@h/d", &["project", "create", "--name", "x"]);
    assert_eq!(code, 1);
    assert!(err.contains("invalid database URL mysql://u:***@h/d"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let (code, _, err) = run("sqlite:///tmp/unused.sqlite", &["serve", "--max-body-bytes", "0"]);
    assert_eq!(code, 2, "{err}");
}
