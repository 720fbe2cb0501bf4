//! The PostgreSQL store's tables and their migrations.
//!
//! Migrations are numbered and applied in order, each in its own transaction, under a
//! transaction-level advisory lock so that workers starting together apply each one once.
//! `agentwire_schema` records what is applied. A database whose schema is newer than this
//! build knows is refused, naming both versions, rather than written in a layout it cannot
//! read.

use postgres::Client;

use super::db::describe;

/// Advisory lock key held while migrating (an arbitrary constant: "agentwire" in ASCII).
const MIGRATION_LOCK: i64 = 0x61_67_65_6e_74_77_69;

/// The migrations, by version. Never edit one that has shipped: add the next.
const MIGRATIONS: &[(i32, &str)] = &[(
    1,
    "
    CREATE TABLE agentwire_threads (
        id TEXT COLLATE \"C\" PRIMARY KEY,
        archived BOOLEAN NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        cwd TEXT NOT NULL,
        model_provider TEXT NOT NULL,
        source_kind TEXT NOT NULL,
        name TEXT,
        preview TEXT NOT NULL,
        search TEXT NOT NULL,
        meta TEXT NOT NULL,
        -- The sequence number the thread's next record gets.
        next_seq BIGINT NOT NULL
    );
    CREATE INDEX agentwire_threads_by_created ON agentwire_threads (archived, created_at, id);
    CREATE INDEX agentwire_threads_by_updated ON agentwire_threads (archived, updated_at, id);
    -- Each thread's rollout records, one JSON line each, in order (the embedded store's
    -- file format, line for line).
    CREATE TABLE agentwire_records (
        thread_id TEXT COLLATE \"C\" NOT NULL
            REFERENCES agentwire_threads (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        line TEXT NOT NULL,
        PRIMARY KEY (thread_id, seq)
    );
    ",
)];

/// Brings the database's schema up to date; an error names what failed.
pub(super) fn migrate(client: &mut Client) -> Result<(), String> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS agentwire_schema (
                version INTEGER PRIMARY KEY,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )",
        )
        .or_else(|e| {
            // Two workers creating it at once: the loser sees a duplicate; the table is there.
            if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) {
                Ok(())
            } else {
                Err(format!("cannot create agentwire_schema: {}", describe(&e)))
            }
        })?;
    let known = MIGRATIONS.last().map_or(0, |(version, _)| *version);
    for (version, sql) in MIGRATIONS {
        let mut transaction = client
            .transaction()
            .map_err(|e| format!("cannot begin migration {version}: {}", describe(&e)))?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(|e| format!("cannot lock for migration {version}: {}", describe(&e)))?;
        let current: i32 = transaction
            .query_one(
                "SELECT COALESCE(MAX(version), 0) FROM agentwire_schema",
                &[],
            )
            .and_then(|row| row.try_get(0))
            .map_err(|e| format!("cannot read agentwire_schema: {}", describe(&e)))?;
        if current > known {
            return Err(format!(
                "the database's schema is version {current}, newer than this agentwire knows \
                 ({known}); upgrade agentwire"
            ));
        }
        if current >= *version {
            continue;
        }
        transaction
            .batch_execute(sql)
            .map_err(|e| format!("migration {version} failed: {}", describe(&e)))?;
        transaction
            .execute(
                "INSERT INTO agentwire_schema (version) VALUES ($1)",
                &[version],
            )
            .map_err(|e| format!("cannot record migration {version}: {}", describe(&e)))?;
        transaction
            .commit()
            .map_err(|e| format!("cannot commit migration {version}: {}", describe(&e)))?;
        tracing::info!(version, "thread store schema migrated");
    }
    Ok(())
}
