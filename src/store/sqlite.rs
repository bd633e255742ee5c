//! The store as an SQLite file ([`SqliteStore`]), SQLite bundled into the
//! binary so that nothing needs installing. Written in WAL mode with a short
//! busy wait, so that a player, an offline `solve` and a `bench solve` can
//! share one file; every change is one immediate transaction. The schema has
//! a version (`PRAGMA user_version`) and a list of migrations from each
//! version to the next; a file of a newer version is refused, never
//! rewritten.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, TransactionBehavior};

use super::{Backend, Change, Entry, Fingerprint, JobRecord, Outcome, StoreError, Stored};
use crate::asp::Proven;

/// The migrations, in order: `MIGRATIONS[v]` takes a store of version `v`
/// to `v + 1`. The schema's version is their number.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE games (
        id INTEGER PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        name TEXT NOT NULL,
        rules TEXT NOT NULL,
        outcome TEXT NOT NULL,
        plan TEXT NOT NULL,
        goal INTEGER,
        proven TEXT NOT NULL,
        lower_bound INTEGER,
        horizon INTEGER NOT NULL,
        solver TEXT NOT NULL,
        solved_at TEXT NOT NULL,
        seconds REAL NOT NULL
    );
    CREATE INDEX games_by_fingerprint ON games (fingerprint);",
    // 2: the solving service's jobs (`ggp-asp serve`'s `/api/solve`).
    "CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        request TEXT NOT NULL,
        answer TEXT,
        error TEXT,
        progress TEXT NOT NULL,
        created TEXT NOT NULL,
        finished TEXT
    );",
];

/// This build's schema version.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long a write waits for another process's transaction to end.
const BUSY_WAIT: Duration = Duration::from_secs(3);

/// A store in one SQLite file.
pub struct SqliteStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SqliteStore {
    /// Opens the store at `path`, creating the file (and its folder) when it
    /// is missing and bringing its schema up to date.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let io = |message: String| StoreError::Io {
            path: path.to_path_buf(),
            message,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| io(format!("cannot create the folder {}: {e}", dir.display())))?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags).map_err(|e| io(e.to_string()))?;
        conn.busy_timeout(BUSY_WAIT)
            .map_err(|e| io(e.to_string()))?;
        // The first read of the file: a file that is not a database fails here.
        let found: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| io(e.to_string()))?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path: path.to_path_buf(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .map_err(|e| io(format!("cannot switch to WAL mode: {e}")))?;
        migrate(&mut conn).map_err(|e| io(format!("cannot bring the schema up to date: {e}")))?;
        Ok(SqliteStore {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::Io {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Applies the migrations the store lacks, in one transaction with the
/// version's bump (a second process doing the same waits, then finds
/// nothing to do).
fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (v, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", v + 1))?;
    }
    tx.commit()
}

const COLUMNS: &str = "id, fingerprint, name, rules, outcome, plan, goal, proven, lower_bound, \
                       horizon, solver, solved_at, seconds";

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, Entry)> {
    let text = |i: usize| -> rusqlite::Result<String> { r.get(i) };
    let bad = |i: usize, what: String| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            Box::<dyn std::error::Error + Send + Sync>::from(what),
        )
    };
    let fingerprint = text(1)?
        .parse::<Fingerprint>()
        .map_err(|e| bad(1, format!("fingerprint: {e}")))?;
    let outcome = match text(4)?.as_str() {
        "solved" => Outcome::Solved,
        "no-plan" => Outcome::NoPlan,
        "timeout" => Outcome::Timeout,
        other => return Err(bad(4, format!("unknown outcome {other:?}"))),
    };
    let plan: Vec<String> =
        serde_json::from_str(&text(5)?).map_err(|e| bad(5, format!("plan: {e}")))?;
    let proven = match text(7)?.as_str() {
        "shortest" => Proven::Shortest,
        "best-goal" => Proven::BestGoal,
        "none" => Proven::None,
        other => return Err(bad(7, format!("unknown proof {other:?}"))),
    };
    let goal: Option<i64> = r.get(6)?;
    let bound: Option<i64> = r.get(8)?;
    let horizon: i64 = r.get(9)?;
    Ok((
        r.get(0)?,
        Entry {
            fingerprint,
            name: text(2)?,
            rules: text(3)?,
            outcome,
            plan,
            goal: goal.and_then(|g| u8::try_from(g).ok()),
            proven,
            lower_bound: bound.and_then(|b| usize::try_from(b).ok()),
            horizon: usize::try_from(horizon).unwrap_or(0),
            solver: text(10)?,
            solved_at: text(11)?,
            seconds: r.get(12)?,
        },
    ))
}

/// Writes `e` as row `id` (a new row when `None`).
fn write_row(conn: &Connection, id: Option<i64>, e: &Entry) -> rusqlite::Result<i64> {
    let plan = serde_json::to_string(&e.plan).expect("a list of strings serialises");
    let values = params![
        e.fingerprint.to_string(),
        e.name,
        e.rules,
        e.outcome.name(),
        plan,
        e.goal.map(i64::from),
        e.proven.name(),
        e.lower_bound.map(|b| b as i64),
        e.horizon as i64,
        e.solver,
        e.solved_at,
        e.seconds,
    ];
    match id {
        None => {
            conn.execute(
                "INSERT INTO games (fingerprint, name, rules, outcome, plan, goal, proven, \
                 lower_bound, horizon, solver, solved_at, seconds) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                values,
            )?;
            Ok(conn.last_insert_rowid())
        }
        Some(id) => {
            conn.execute(
                "UPDATE games SET fingerprint = ?1, name = ?2, rules = ?3, outcome = ?4, \
                 plan = ?5, goal = ?6, proven = ?7, lower_bound = ?8, horizon = ?9, \
                 solver = ?10, solved_at = ?11, seconds = ?12 WHERE id = ?13",
                rusqlite::params_from_iter(
                    values.iter().copied().chain([&id as &dyn rusqlite::ToSql]),
                ),
            )?;
            Ok(id)
        }
    }
}

fn select(conn: &Connection, fp: &Fingerprint) -> rusqlite::Result<Vec<(i64, Entry)>> {
    let mut q = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM games WHERE fingerprint = ?1 ORDER BY id"
    ))?;
    let rows = q.query_map([fp.to_string()], read_row)?;
    rows.collect()
}

impl Backend for SqliteStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn candidates(&self, fp: &Fingerprint) -> Result<Vec<(i64, Entry)>, StoreError> {
        select(&self.lock(), fp).map_err(|e| self.err(e))
    }

    fn update(
        &self,
        fp: &Fingerprint,
        decide: &mut dyn FnMut(&[Stored]) -> Change,
    ) -> Result<Option<i64>, StoreError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let seen = select(&tx, fp).map_err(|e| self.err(e))?;
        let id = match decide(&seen) {
            Change::Keep => None,
            Change::Insert(e) => Some(write_row(&tx, None, &e).map_err(|e| self.err(e))?),
            Change::Replace(id, e) => Some(write_row(&tx, Some(id), &e).map_err(|e| self.err(e))?),
        };
        tx.commit().map_err(|e| self.err(e))?;
        Ok(id)
    }

    fn list(&self) -> Result<Vec<(i64, Entry)>, StoreError> {
        let conn = self.lock();
        let mut q = conn
            .prepare(&format!("SELECT {COLUMNS} FROM games ORDER BY id"))
            .map_err(|e| self.err(e))?;
        let rows = q.query_map([], read_row).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    fn remove(&self, id: i64) -> Result<bool, StoreError> {
        let conn = self.lock();
        let n = conn
            .execute("DELETE FROM games WHERE id = ?1", [id])
            .map_err(|e| self.err(e))?;
        Ok(n > 0)
    }

    fn save_job(&self, job: &JobRecord) -> Result<(), StoreError> {
        let progress = serde_json::to_string(&job.progress).unwrap_or_else(|_| "[]".into());
        self.lock()
            .execute(
                "INSERT INTO jobs (id, status, request, answer, error, progress, created, finished)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (id) DO UPDATE SET status = ?2, request = ?3, answer = ?4,
                     error = ?5, progress = ?6, created = ?7, finished = ?8",
                params![
                    job.id,
                    job.status,
                    job.request,
                    job.answer,
                    job.error,
                    progress,
                    job.created,
                    job.finished
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        let conn = self.lock();
        let mut q = conn
            .prepare(
                "SELECT id, status, request, answer, error, progress, created, finished
                 FROM jobs ORDER BY created, id",
            )
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map([], |r| {
                let progress: String = r.get(5)?;
                Ok(JobRecord {
                    id: r.get(0)?,
                    status: r.get(1)?,
                    request: r.get(2)?,
                    answer: r.get(3)?,
                    error: r.get(4)?,
                    // A progress list that does not read is only lost text.
                    progress: serde_json::from_str(&progress).unwrap_or_default(),
                    created: r.get(6)?,
                    finished: r.get(7)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }
}
