//! The harness's own PostgreSQL server (it restarts it, so never the shared one of
//! `DEPOSITKIT_TEST_POSTGRES_URL`): started by `scripts/postgres.sh` in a temporary directory
//! (the same binaries, the same root handling), stopped by the script's watcher when the test
//! process exits; and plain SQL on it from the harness.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A throwaway server this harness may stop, start and crash.
pub struct OwnPostgres {
    dir: PathBuf,
    url: String,
    bin: PathBuf,
    port: u16,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres.sh")
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

impl OwnPostgres {
    /// Starts a server of its own and makes its settings durable (`ALTER SYSTEM`): the same
    /// port and sockets after a plain `pg_ctl start`, and `track_commit_timestamp` for the
    /// audit's commit order.
    pub fn start() -> OwnPostgres {
        let dir = std::env::temp_dir().join(format!(
            "depositkit-faults-pg-{}-{}",
            std::process::id(),
            nanos()
        ));
        let url = depositkit_server::testing::start_server_in(
            &dir,
            "scripts/postgres.sh could not start the harness's PostgreSQL",
        );
        let bin = PathBuf::from(std::fs::read_to_string(dir.join("bin")).unwrap().trim());
        let port =
            url.rsplit(':').next().and_then(|p| p.split('/').next()).unwrap().parse().unwrap();
        let server = OwnPostgres { dir, url, bin, port };
        let run = server.dir.join("run");
        let settings = [
            format!("port = {port}"),
            "listen_addresses = '127.0.0.1'".to_owned(),
            format!("unix_socket_directories = '{}'", run.display()),
            "fsync = off".to_owned(),
            // A crash restart must keep every commit a member was told of: on (fsync off only
            // risks the OS crashing, not PostgreSQL).
            "synchronous_commit = on".to_owned(),
            "max_connections = 300".to_owned(),
            "track_commit_timestamp = on".to_owned(),
        ];
        for setting in settings {
            // One statement each: ALTER SYSTEM refuses to run inside a transaction block.
            execute(&server.url, &format!("ALTER SYSTEM SET {setting}"))
                .unwrap_or_else(|e| panic!("ALTER SYSTEM SET {setting} failed: {e}"));
        }
        // Stop and start, not restart: a restart would reuse the script's command line,
        // whose `-c` settings (synchronous_commit=off among them) override ALTER SYSTEM.
        server.stop();
        server.start_again();
        let sql = "SELECT current_setting('synchronous_commit') || ' ' || \
                   current_setting('track_commit_timestamp')";
        let now = rows(&server.url, sql).expect("the restarted PostgreSQL answers");
        assert_eq!(now[0][0].as_deref(), Some("on on"), "the harness's settings took");
        server
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn pg_ctl(&self, args: &[&str]) {
        let data = self.dir.join("data");
        let log = self.dir.join("run/server.log");
        let pg_ctl = self.bin.join("pg_ctl");
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(pg_ctl);
            c
        } else {
            Command::new(pg_ctl)
        };
        command.args(["-w", "-t", "60", "-D"]).arg(&data).arg("-l").arg(&log).args(args);
        let output = command.output().expect("pg_ctl runs");
        assert!(
            output.status.success(),
            "pg_ctl {args:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Restarts the server: `immediate` crashes it (recovery on start), else a fast shutdown.
    pub fn restart(&self, immediate: bool) {
        self.pg_ctl(&["-m", if immediate { "immediate" } else { "fast" }, "restart"]);
    }

    /// Stops the server (fast shutdown: sessions are cut).
    pub fn stop(&self) {
        self.pg_ctl(&["-m", "fast", "stop"]);
    }

    /// Starts it again on the same port.
    pub fn start_again(&self) {
        self.pg_ctl(&["start"]);
    }

    /// The port, for the report.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(script()).arg("stop").arg(&self.dir).output();
    }
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

/// `url` with a connect timeout for the harness's own sessions.
fn harness_url(url: &str) -> String {
    format!("{url}{}connect_timeout=5", if url.contains('?') { '&' } else { '?' })
}

/// Runs `work` with a fresh connection to `url` on a runtime of its own thread.
pub fn with_client<T: Send + 'static>(
    url: &str,
    work: impl AsyncFnOnce(&tokio_postgres::Client) -> Result<T, tokio_postgres::Error> + Send + 'static,
) -> Result<T, String> {
    let url = harness_url(url);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async move {
            let (client, connection) = tokio::time::timeout(
                Duration::from_secs(10),
                tokio_postgres::connect(&url, tokio_postgres::NoTls),
            )
            .await
            .map_err(|_| "connecting timed out".to_owned())?
            .map_err(|e| e.to_string())?;
            let driver = tokio::spawn(connection);
            let result = work(&client).await.map_err(|e| match e.as_db_error() {
                Some(db) => format!("{e}: {}", db.message()),
                None => e.to_string(),
            });
            drop(client);
            let _ = driver.await;
            result
        })
    })
    .join()
    .unwrap_or_else(|_| Err("the SQL thread panicked".to_owned()))
}

/// Runs `sql` (one or more statements).
pub fn execute(url: &str, sql: &str) -> Result<(), String> {
    let sql = sql.to_owned();
    with_client(url, async move |client| client.batch_execute(&sql).await)
}

/// The rows of `sql` (no parameters), every column read as text.
pub fn rows(url: &str, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
    let sql = sql.to_owned();
    with_client(url, async move |client| {
        let messages = client.simple_query(&sql).await?;
        Ok(messages
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => {
                    Some((0..row.len()).map(|i| row.get(i).map(str::to_owned)).collect())
                }
                _ => None,
            })
            .collect())
    })
}
