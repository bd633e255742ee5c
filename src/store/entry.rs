//! One game's record in the store, and how two records of the same game
//! merge: the better plan (higher goal, then fewer moves, then proven) and
//! the larger proven bound, whichever run found them. A record is also the
//! line of the store's export format (JSON lines, one [`Entry`] a line; see
//! docs/store.md).

use serde::{Deserialize, Serialize};

use crate::asp::{Proven, SolveResult, Status};

use super::Fingerprint;

/// What the store knows about a game's answer.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A verified plan to goal 100, or the best goal proven (see
    /// [`Entry::proven`] for what is proven of it).
    Solved,
    /// The solver proved that no plan within [`Entry::horizon`] moves reaches
    /// a goal.
    NoPlan,
    /// Runs ended on their timeouts: the plan, if any, is the best seen
    /// (below 100), and [`Entry::lower_bound`] what was proven.
    Timeout,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Solved => "solved",
            Outcome::NoPlan => "no-plan",
            Outcome::Timeout => "timeout",
        }
    }
}

/// A game's record: its rules in the names its plan uses, and what every
/// run on it found and proved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The rules' [`Fingerprint`]: the same for any renaming of them
    /// (32 hex digits in JSON).
    #[serde(with = "hex")]
    pub fingerprint: Fingerprint,
    /// The name the game was first recorded under (a file's stem, a match
    /// id): for people; lookups never use it.
    pub name: String,
    /// The rules as KIF, one rule a line, in the names of [`Entry::plan`].
    pub rules: String,
    pub outcome: Outcome,
    /// The verified plan, one move a step, as KIF; empty when none is known.
    #[serde(default)]
    pub plan: Vec<String>,
    /// The plan's goal; `None` when no plan is known (a verified plan may be
    /// empty: the game is over at once).
    #[serde(default)]
    pub goal: Option<u8>,
    /// What is proven of the plan.
    #[serde(default)]
    pub proven: Proven,
    /// The fewest moves a plan to goal 100 can have, as proven: a later
    /// solve starts its proof from there.
    #[serde(default)]
    pub lower_bound: Option<usize>,
    /// The largest horizon the solver searched.
    #[serde(default)]
    pub horizon: usize,
    /// The ggp-asp version that last improved the record.
    pub solver: String,
    /// When the record was last improved, UTC (`2026-11-29T02:40:00Z`).
    pub solved_at: String,
    /// The solver's seconds on this game, over every run recorded.
    #[serde(default)]
    pub seconds: f64,
}

impl Entry {
    /// The record of one solve's answer on a game; `None` for an error,
    /// which says nothing about the game.
    pub fn of_result(
        fingerprint: Fingerprint,
        name: &str,
        rules: String,
        r: &SolveResult,
    ) -> Option<Entry> {
        let outcome = match r.status {
            Status::Solved => Outcome::Solved,
            Status::NoPlan => Outcome::NoPlan,
            Status::Timeout => Outcome::Timeout,
            Status::Error => return None,
        };
        Some(Entry {
            fingerprint,
            name: name.to_string(),
            rules,
            outcome,
            plan: r.plan.clone(),
            // A verified plan (empty in a game over at once) has its goal;
            // a timeout or no-plan answer without a plan has none.
            goal: if r.plan.is_empty() && r.status != Status::Solved {
                None
            } else {
                r.goal
            },
            proven: r.proven,
            lower_bound: r.lower_bound,
            horizon: r.horizon,
            solver: version(),
            solved_at: now_utc(),
            seconds: r.total_s.max(0.0),
        })
    }

    /// Whether this record answers a solve at once: a plan proven shortest
    /// or best, or a proof that no plan exists within `max_steps` moves.
    pub fn is_final(&self, max_steps: usize) -> bool {
        match self.outcome {
            Outcome::Solved => self.goal.is_some() && self.proven != Proven::None,
            // What the solver proved of no plan (the best goal 0 within its
            // horizon), or the horizon covers this solve's.
            Outcome::NoPlan => self.proven != Proven::None || self.horizon >= max_steps,
            Outcome::Timeout => false,
        }
    }

    /// Whether this record answers a solve with `max_steps` and `timeout`
    /// at once: it is final, or the runs recorded already spent at least
    /// the time this one has (a solve that timed out at 60 s is not
    /// repeated by another of 60 s; one with more time, or none, goes on
    /// from the stored bound).
    pub fn answers(&self, max_steps: usize, timeout: Option<std::time::Duration>) -> bool {
        self.is_final(max_steps)
            || timeout.is_some_and(|t| self.seconds >= t.as_secs_f64() * SPENT_ENOUGH)
    }

    /// The answer `solve` prints for this record.
    pub fn to_result(&self) -> SolveResult {
        let mut r = SolveResult::error(String::new());
        r.status = match self.outcome {
            Outcome::Solved => Status::Solved,
            Outcome::NoPlan => Status::NoPlan,
            Outcome::Timeout => Status::Timeout,
        };
        r.goal = self.goal;
        r.steps = self.goal.map(|_| self.plan.len());
        r.plan = self.plan.clone();
        r.proven = self.proven;
        r.horizon = self.horizon;
        r.lower_bound = self.lower_bound;
        r
    }

    /// `self` and `new` (a record of the same game, in the same names)
    /// together: the better plan, the larger proven bound and horizon; the
    /// solver and date of the newer record when it improved anything.
    /// `None` when `new` adds nothing.
    pub fn merged(&self, new: &Entry) -> Option<Entry> {
        let mut m = self.clone();
        m.seconds = self.seconds + new.seconds;
        let better_plan = plan_key(new) > plan_key(self);
        if better_plan {
            m.plan = new.plan.clone();
            m.goal = new.goal;
            m.proven = new.proven;
        }
        m.lower_bound = self.lower_bound.max(new.lower_bound);
        m.horizon = self.horizon.max(new.horizon);
        if new.outcome == Outcome::NoPlan && m.goal.is_none() {
            m.outcome = Outcome::NoPlan;
            if m.proven == Proven::None {
                m.proven = new.proven;
            }
        }
        // A bound proven by one run and a plan found by another may together
        // prove the plan shortest.
        if m.goal == Some(100) && m.lower_bound.is_some_and(|b| b >= m.plan.len()) {
            m.proven = Proven::Shortest;
        }
        if m.goal.is_some() {
            // As the solver answers: a plan to 100 or a proven best is
            // solved; a plan below 100, nothing proven, is a timeout's.
            m.outcome = if m.proven == Proven::None && m.goal != Some(100) {
                Outcome::Timeout
            } else {
                Outcome::Solved
            };
        }
        let improved = better_plan
            || m.lower_bound != self.lower_bound
            || m.horizon != self.horizon
            || m.proven != self.proven
            || m.outcome != self.outcome;
        if !improved {
            return None;
        }
        m.solver = new.solver.clone();
        m.solved_at = new.solved_at.clone();
        Some(m)
    }
}

impl Entry {
    /// Orders records of one game: the better plan ([`plan_key`]), then the
    /// larger proven bound.
    pub fn rank(&self) -> impl Ord {
        (plan_key(self), self.lower_bound)
    }
}

/// The share of a solve's timeout the recorded runs must have spent for
/// their answer to stand for it (a run that timed out reports a little less
/// or more than its timeout).
const SPENT_ENOUGH: f64 = 0.9;

/// Orders plans: any plan over none, then the higher goal, then the fewer
/// moves, then the more proven.
fn plan_key(e: &Entry) -> (bool, u8, std::cmp::Reverse<usize>, u8) {
    let proven = match e.proven {
        Proven::Shortest => 2,
        Proven::BestGoal => 1,
        Proven::None => 0,
    };
    (
        e.goal.is_some(),
        e.goal.unwrap_or(0),
        std::cmp::Reverse(e.plan.len()),
        proven,
    )
}

/// A fingerprint in JSON: its hex digits.
mod hex {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Fingerprint;

    pub fn serialize<S: Serializer>(fp: &Fingerprint, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(fp)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Fingerprint, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// This build's name and version, as records keep it.
pub fn version() -> String {
    format!("ggp-asp {}", env!("CARGO_PKG_VERSION"))
}

/// The time now, UTC, as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// Seconds since 1970 as a UTC date and time (the civil calendar from a
/// day count, after Howard Hinnant's `civil_from_days`).
fn utc(secs: u64) -> String {
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(plan: &[&str], goal: Option<u8>, proven: Proven, bound: Option<usize>) -> Entry {
        Entry {
            fingerprint: Fingerprint(0),
            name: "g".into(),
            rules: String::new(),
            outcome: if goal.is_some() && (proven != Proven::None || goal == Some(100)) {
                Outcome::Solved
            } else {
                Outcome::Timeout
            },
            plan: plan.iter().map(|s| s.to_string()).collect(),
            goal,
            proven,
            lower_bound: bound,
            horizon: bound.unwrap_or(0),
            solver: version(),
            solved_at: now_utc(),
            seconds: 1.0,
        }
    }

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_795_919_999), "2026-11-29T02:39:59Z");
    }

    #[test]
    fn a_shorter_plan_replaces_a_longer_one_and_a_worse_one_changes_nothing() {
        let long = entry(&["a", "b", "c"], Some(100), Proven::None, None);
        let short = entry(&["a", "b"], Some(100), Proven::None, None);
        let m = long.merged(&short).unwrap();
        assert_eq!(m.plan.len(), 2);
        assert!(short.merged(&long).is_none());
        let low = entry(&["a"], Some(50), Proven::BestGoal, None);
        assert!(short.merged(&low).is_none());
    }

    #[test]
    fn a_bound_from_one_run_and_a_plan_from_another_prove_it_shortest() {
        let bound_only = entry(&[], None, Proven::None, Some(2));
        let plan = entry(&["a", "b"], Some(100), Proven::None, None);
        let m = bound_only.merged(&plan).unwrap();
        assert_eq!(m.proven, Proven::Shortest);
        assert_eq!(m.outcome, Outcome::Solved);
        assert!(m.is_final(200));
        // The proof is kept when a run with a smaller bound comes later.
        let weaker = entry(&[], None, Proven::None, Some(1));
        assert!(m.merged(&weaker).is_none());
        assert_eq!(m.seconds, 2.0);
    }

    #[test]
    fn a_timeout_answers_a_solve_with_no_more_time_than_was_spent() {
        let mut t = entry(&[], None, Proven::None, Some(7));
        t.seconds = 60.0;
        let secs = std::time::Duration::from_secs;
        assert!(t.answers(200, Some(secs(60))));
        assert!(!t.answers(200, Some(secs(120))));
        assert!(!t.answers(200, None));
    }

    #[test]
    fn a_timeout_is_not_an_answer_but_its_bound_is_kept() {
        let t = entry(&[], None, Proven::None, Some(7));
        assert!(!t.is_final(200));
        let later = entry(&[], None, Proven::None, Some(9));
        assert_eq!(t.merged(&later).unwrap().lower_bound, Some(9));
    }
}
