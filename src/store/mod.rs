//! The plan store: every single-player game solved, remembered across runs and
//! matches, and found again when a game manager sends it under scrambled
//! names. It owns the game's identity up to renaming ([`fingerprint`]), the
//! record of what was found and proven about a game ([`Entry`], merged so
//! that a better answer replaces a worse one and a proof is never lost), the
//! one small interface the code reaches a store through ([`Backend`]), its
//! SQLite implementation ([`sqlite`]), and the lookups that `solve` and the
//! player make ([`Plans`]: a stored plan is mapped into the new game's names;
//! replaying it before it is trusted is the caller's, on its own engine).
//!
//! A store is a help, never a dependency: [`Plans::open_default`] gives a
//! one-line warning and no store when the file cannot be used.

pub mod entry;
pub mod fingerprint;
pub mod jobs;
pub mod plans;
pub mod sqlite;

use std::path::{Path, PathBuf};

pub use entry::{Entry, Outcome};
pub use fingerprint::Fingerprint;
pub use jobs::JobRecord;
pub use plans::{Plans, Recalled};

/// Why the store could not answer.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store file could not be opened, read or written.
    #[error("plan store {}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    /// The store was written by a newer ggp-asp.
    #[error(
        "plan store {}: its schema is version {found}, newer than this ggp-asp's ({known}); \
         use a newer ggp-asp or another store (--store PATH)",
        path.display()
    )]
    Newer {
        path: PathBuf,
        found: i64,
        known: i64,
    },
}

/// A record as a store holds it: its id, and the record.
pub type Stored = (i64, Entry);

/// What [`Backend::update`]'s decision does with the candidates it saw.
pub enum Change {
    /// Nothing to write.
    Keep,
    /// A new entry.
    Insert(Entry),
    /// The stored entry with this id becomes this one.
    Replace(i64, Entry),
}

/// The one interface the code reaches a store through: a database on this
/// machine today ([`sqlite::SqliteStore`]), a server shared by a team of
/// players later. Entries are looked up by fingerprint; the caller confirms
/// a candidate by mapping its rules ([`fingerprint::find_mapping`]).
pub trait Backend: Send + Sync {
    /// Where the store is, for messages.
    fn location(&self) -> String;
    /// The entries with this fingerprint, each with its id.
    fn candidates(&self, fp: &Fingerprint) -> Result<Vec<Stored>, StoreError>;
    /// Reads the candidates for `fp` and writes what `decide` makes of them,
    /// as one transaction: two processes recording the same game at once
    /// see each other's writes, and neither loses the other's plan or proof.
    fn update(
        &self,
        fp: &Fingerprint,
        decide: &mut dyn FnMut(&[Stored]) -> Change,
    ) -> Result<Option<i64>, StoreError>;
    /// Every entry, oldest first.
    fn list(&self) -> Result<Vec<Stored>, StoreError>;
    /// Removes the entry with this id; whether there was one.
    fn remove(&self, id: i64) -> Result<bool, StoreError>;
    /// Writes a job of the solving service (inserted, or replacing the
    /// record of the same id).
    fn save_job(&self, job: &JobRecord) -> Result<(), StoreError>;
    /// Every job kept, oldest first.
    fn jobs(&self) -> Result<Vec<JobRecord>, StoreError>;
}

/// The environment variable that names the default store's file (`off`
/// for none), before the platform's data folder.
pub const STORE_ENV: &str = "GGP_ASP_STORE";

/// The store used when no `--store` is given: `$GGP_ASP_STORE` when set
/// (`None` when it is `off` or empty), else `plans.sqlite` in the user's
/// data folder (`$XDG_DATA_HOME/ggp-asp` or `~/.local/share/ggp-asp` on
/// Linux, the platform's equivalent elsewhere).
pub fn default_path() -> Option<PathBuf> {
    match std::env::var_os(STORE_ENV) {
        Some(v) if v.is_empty() || v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => dirs::data_dir().map(|d| d.join("ggp-asp").join("plans.sqlite")),
    }
}

/// Whether `path` names the store that is off.
pub fn is_off(path: &Path) -> bool {
    path.as_os_str() == "off"
}
