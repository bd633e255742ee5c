//! The solving service's jobs as the store keeps them ([`JobRecord`]): one
//! row per job, its request and its answer as JSON text, so that finished
//! jobs outlive a restart of the service. The store only keeps them; what a
//! job is and how it runs belongs to [`crate::service`].

use serde::{Deserialize, Serialize};

/// One job of the solving service, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// The job's id (in its URL).
    pub id: String,
    /// `queued`, `running`, `solved`, `no-plan`, `timeout`, `error`,
    /// `cancelled`.
    pub status: String,
    /// The request as it was accepted (JSON).
    pub request: String,
    /// `solve --json`'s object once the job has ended with one (JSON).
    pub answer: Option<String>,
    /// Why the job ended without an answer.
    pub error: Option<String>,
    /// The solver's progress lines, in order.
    pub progress: Vec<String>,
    /// UTC times, as the store writes them ([`super::entry::now_utc`]).
    pub created: String,
    pub finished: Option<String>,
}
