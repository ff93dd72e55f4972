//! A real PostgreSQL server for tests (feature `test-harness`), shared by every test of a test
//! session, with a fresh database per test.
//!
//! The server is the one `DEPOSITKIT_TEST_POSTGRES_URL` names (`scripts/test.sh` starts one with
//! `scripts/postgres.sh` around its cargo-test step); when the variable is unset, the first test
//! that asks starts one for its test binary through the same script (installing Debian's
//! `postgresql` package first when it is missing and we are root), stopped once the test binary
//! exits. Under `CI=true` the variable must be set (a missing server is the CI's failure). There is
//! no skipping: when no server can be had, the test fails saying why.
//!
//! ```no_run
//! let db = depositkit_server::testing::TestDatabase::create();
//! let url = db.url(); // postgres://postgres@127.0.0.1:PORT/dk_test_…, empty
//! # let _ = url;
//! ```

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The environment variable naming the test server (a database URL whose database may be
/// anything: tests create their own next to it).
pub const URL_ENV: &str = "DEPOSITKIT_TEST_POSTGRES_URL";

/// The script that starts and stops throwaway servers.
fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres.sh")
}

/// The URL of the test server, starting one for this process on first use when
/// [`URL_ENV`] is unset (outside CI).
///
/// # Panics
/// Under `CI=true` without [`URL_ENV`]; when no server can be started: the message says what
/// failed.
pub fn server_url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| match std::env::var(URL_ENV) {
        Ok(url) if !url.trim().is_empty() => url.trim().to_owned(),
        _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => panic!(
            "{URL_ENV} is unset under CI=true: scripts/test.sh starts PostgreSQL (scripts/postgres.sh) and exports it; PostgreSQL tests never skip"
        ),
        _ => start_server(),
    })
    .clone()
}

fn start_server() -> String {
    let dir = std::env::temp_dir().join(format!(
        "depositkit-pg-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    start_server_in(
        &dir,
        &format!(
            "{URL_ENV} is unset and scripts/postgres.sh could not start PostgreSQL (PostgreSQL tests never skip)"
        ),
    )
}

/// Starts a throwaway PostgreSQL server in `dir` with `scripts/postgres.sh` (stopped by the
/// script's watcher when this process exits, however it exits) and returns its URL: for a test
/// that needs a server of its own (one it restarts, say) rather than the shared [`server_url`].
///
/// # Panics
/// When the server cannot be started: `failure`, then the script's output.
pub fn start_server_in(dir: &std::path::Path, failure: &str) -> String {
    let output = Command::new("bash")
        .arg(script())
        .arg("start")
        .arg(dir)
        .arg("--watch-pid")
        .arg(std::process::id().to_string())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script().display()));
    assert!(output.status.success(), "{failure}:\n{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// An empty database of its own on the test server, dropped with this value.
#[derive(Debug)]
pub struct TestDatabase {
    name: String,
    url: String,
    admin_url: String,
}

impl TestDatabase {
    /// Creates `dk_test_<random>` on the test server ([`server_url`]).
    ///
    /// # Panics
    /// When the server cannot be had or refuses `CREATE DATABASE`.
    pub fn create() -> Self {
        let admin_url = server_url();
        let name = format!("dk_test_{}", uuid::Uuid::new_v4().simple());
        let url = with_database(&admin_url, &name);
        let sql = format!("CREATE DATABASE {name}");
        if let Err(e) = run_sql(&admin_url, &sql) {
            panic!("cannot create a test database on {admin_url}: {e}");
        }
        TestDatabase { name, url, admin_url }
    }

    /// The URL of this database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs `sql` (one or more statements) in this database.
    ///
    /// # Panics
    /// When the statements fail.
    pub fn execute(&self, sql: &str) {
        if let Err(e) = run_sql(&self.url, sql) {
            panic!("{sql} failed on the test database: {e}");
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let _ = run_sql(&self.admin_url, &sql);
    }
}

/// `url` naming database `name` instead.
fn with_database(url: &str, name: &str) -> String {
    let authority_start = url.find("://").map_or(0, |i| i + 3);
    let path_start = url[authority_start..].find('/').map(|i| authority_start + i);
    let query_start = url.find('?');
    match (path_start, query_start) {
        (Some(p), Some(q)) if p < q => format!("{}/{name}{}", &url[..p], &url[q..]),
        (Some(p), None) => format!("{}/{name}", &url[..p]),
        (_, Some(q)) => format!("{}/{name}{}", &url[..q], &url[q..]),
        (None, None) => format!("{url}/{name}"),
    }
}

/// Runs `sql` on `url` from a thread of its own (callers may be inside a runtime).
fn run_sql(url: &str, sql: &str) -> Result<(), String> {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .map_err(|e| crate::error::with_causes(&e))?;
            let driver = tokio::spawn(connection);
            let result =
                client.batch_execute(&sql).await.map_err(|e| crate::error::with_causes(&e));
            drop(client);
            let _ = driver.await;
            result
        })
    })
    .join()
    .unwrap_or_else(|_| Err("the SQL thread panicked".into()))
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn urls_get_the_database_swapped() {
        assert_eq!(with_database("postgres://p@h:1/postgres", "x"), "postgres://p@h:1/x");
        assert_eq!(
            with_database("postgres://p@h:1/db?sslmode=disable", "x"),
            "postgres://p@h:1/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://p@h:1", "x"), "postgres://p@h:1/x");
        assert_eq!(with_database("postgres://p@h:1?a=b", "x"), "postgres://p@h:1/x?a=b");
    }
}
