//! What a refereed match leaves behind ([`MatchRecord`]): its moves, the
//! replies the referee replaced and why, every answer's time beside the
//! clocks, which engine computed which steps, and the goals; serialised as
//! the JSON `match` and `bench arena` print.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::MoveReport;
use crate::reasoner::RoleIdx;

/// A player's reply the referee could not use (late, illegal or failed), and
/// what it did about it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ReplyError {
    pub role: String,
    /// The step (0 = the first move; the START reply also counts as step 0).
    pub step: usize,
    /// `timeout`, `illegal` or `error`.
    pub kind: String,
    pub detail: String,
}

/// How a match ended.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MatchEnd {
    Terminal,
    MaxSteps,
}

/// Everything that happened in one match.
#[derive(Clone, Debug, Serialize)]
pub struct MatchRecord {
    pub match_id: String,
    pub roles: Vec<String>,
    /// The players, by name, in role order.
    pub players: Vec<String>,
    /// Joint moves, each a list of KIF strings in role order.
    pub moves: Vec<Vec<String>>,
    pub errors: Vec<ReplyError>,
    /// Role -> goal at the end (`null` when the game gives none or several).
    #[serde(serialize_with = "goals_as_object")]
    pub goals: Vec<(String, Option<u8>)>,
    /// Role -> its slowest answer (START or PLAY) in seconds, as the referee
    /// timed it.
    #[serde(serialize_with = "goals_as_object")]
    pub worst_reply_s: Vec<(String, f64)>,
    /// Every answer's time beside the clocks.
    pub reply_times: ReplyTimes,
    pub end: MatchEnd,
    /// The engine that computed the last step.
    pub engine: String,
    /// Which engine computed which steps: the first from step 0, the chosen
    /// one from the step it took over (when it did).
    pub engines: Vec<EngineSpan>,
    /// The in-process players' accounts of their moves, by step.
    pub move_reports: Vec<MoveReport>,
    pub seconds: f64,
}

/// An engine of the referee's and the first step it computed.
#[derive(Clone, Debug, Serialize)]
pub struct EngineSpan {
    pub engine: String,
    pub from_step: usize,
}

/// How long every answer of a match took, as the referee timed it (from
/// sending the message to reading the reply, in seconds to the millisecond),
/// beside the clocks they ran under: the answers of an HTTP player include
/// the network's time, as a game manager sees them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReplyTimes {
    pub start_clock_s: f64,
    pub play_clock_s: f64,
    /// Role -> its START answer.
    #[serde(serialize_with = "goals_as_object")]
    pub start_s: Vec<(String, f64)>,
    /// Role -> its PLAY answers, by step.
    #[serde(serialize_with = "goals_as_object")]
    pub play_s: Vec<(String, Vec<f64>)>,
}

impl MatchRecord {
    /// The goal of role `r` (0 when the game gives it none).
    pub fn score(&self, r: RoleIdx) -> u8 {
        self.goals.get(r).and_then(|g| g.1).unwrap_or(0)
    }
}

/// A list of (role, value) pairs as a JSON object.
fn goals_as_object<S: Serializer, V: Serialize>(
    goals: &[(String, V)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(goals.len()))?;
    for (r, g) in goals {
        m.serialize_entry(r, g)?;
    }
    m.end()
}
