//! The thread stores a test can run a server on: the embedded default, or a database of its
//! own in the throwaway PostgreSQL cluster that `scripts/postgres-cluster.sh` starts (once for
//! every test process, reused while it runs).

use std::process::Command;

use crate::common::repo;

/// Where a test's servers keep their threads.
#[derive(Debug, Clone)]
pub enum Store {
    /// Files and SQLite under each server's `AGENTWIRE_HOME`.
    Embedded,
    /// This PostgreSQL database (shared by every server of the test).
    Postgres(String),
}

impl Store {
    /// A new, empty database named after `test` in the test cluster.
    pub fn postgres(test: &str) -> Self {
        let started = Command::new("bash")
            .arg(repo().join("scripts/postgres-cluster.sh"))
            .arg("start")
            .output()
            .expect("run scripts/postgres-cluster.sh");
        assert!(
            started.status.success(),
            "the test cluster did not start: {}",
            String::from_utf8_lossy(&started.stderr)
        );
        let admin = String::from_utf8_lossy(&started.stdout).trim().to_owned();
        let name = format!(
            "t_{}_{}",
            test.to_ascii_lowercase()
                .replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
            std::process::id()
        );
        psql(&admin, &format!("DROP DATABASE IF EXISTS {name}"));
        psql(&admin, &format!("CREATE DATABASE {name}"));
        let base = admin
            .strip_suffix("/postgres")
            .expect("the cluster URL names its postgres database");
        Store::Postgres(format!("{base}/{name}"))
    }

    /// The `app-server` arguments that select this store.
    pub fn args(&self) -> Vec<&str> {
        match self {
            Store::Embedded => Vec::new(),
            Store::Postgres(url) => vec!["--store", url],
        }
    }

    /// This store's database and the URL of the cluster's `postgres` database, from which it
    /// can be altered (PostgreSQL only).
    fn database(&self) -> (&str, String) {
        let Store::Postgres(url) = self else {
            panic!("the embedded store has no database");
        };
        let (base, name) = url.rsplit_once('/').expect("the URL names a database");
        (name, format!("{base}/postgres"))
    }

    /// Whether this store's database takes new connections (PostgreSQL only); those open stay.
    pub fn allow_connections(&self, allowed: bool) {
        let (name, admin) = self.database();
        psql(
            &admin,
            &format!("ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {allowed}"),
        );
    }

    /// Ends the database session of backend process `pid` (PostgreSQL only), from outside this
    /// store's database so that it works while that refuses connections; whether it ended.
    pub fn terminate(&self, pid: u32) -> bool {
        let (_, admin) = self.database();
        psql(&admin, &format!("SELECT pg_terminate_backend({pid})")).trim() == "t"
    }

    /// Runs `sql` in this store's database (PostgreSQL only); returns what `psql` printed, one
    /// row per line, fields separated by `|`.
    pub fn query(&self, sql: &str) -> String {
        match self {
            Store::Embedded => panic!("the embedded store has no SQL to run"),
            Store::Postgres(url) => psql(url, sql),
        }
    }
}

/// Runs `sql` with `psql` on `url`; panics with its error output if it fails.
fn psql(url: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .args([url, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .expect("run psql (postgresql-client, installed with postgresql-15)");
    assert!(
        output.status.success(),
        "psql {sql:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
