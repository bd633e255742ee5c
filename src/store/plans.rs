//! The lookups `solve`, `bench solve` and the player make ([`Plans`]): a
//! game is found by its fingerprint, confirmed by an explicit mapping of the
//! stored rules' symbols onto its own, and the stored plan comes back in the
//! game's own names ([`Recalled`]); what a run finds is written back, mapped
//! into the stored names and merged with what was there. Nothing here trusts
//! a plan: the caller replays it on its engine before using it.

use std::path::Path;
use std::time::{Duration, Instant};

use tracing::warn;

use crate::asp::{verify, SolveResult, Source};
use crate::gdl::{self, print, Description, Game, Term};
use crate::reasoner::prepare::replay_prover;
use crate::reasoner::prover::{Prover, Strategy};

use super::fingerprint::{self, SymbolMap};
use super::sqlite::SqliteStore;
use super::{Backend, Change, Entry, Fingerprint, JobRecord, StoreError, Stored};

/// What [`Plans::lookup`] found.
#[derive(Debug)]
pub enum Lookup {
    /// The store's answer, its plan replayed on the prover, and the record.
    Answer(Box<Recalled>, SolveResult),
    /// No answer to give, but no plan to goal 100 has fewer moves than this.
    Bound(usize),
    Nothing,
}

/// A stored record found for a game.
#[derive(Clone, Debug)]
pub struct Recalled {
    /// The record's id in the store.
    pub id: i64,
    /// The record, its plan in the names of the game looked up (its rules
    /// stay the stored ones).
    pub entry: Entry,
    /// The seconds the lookup and the mapping took.
    pub seconds: f64,
}

/// A plan store and the lookups over it.
pub struct Plans {
    backend: Box<dyn Backend>,
}

impl std::fmt::Debug for Plans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plans")
            .field("location", &self.location())
            .finish()
    }
}

impl Plans {
    pub fn new(backend: Box<dyn Backend>) -> Plans {
        Plans { backend }
    }

    /// The SQLite store at `path`.
    pub fn open(path: &Path) -> Result<Plans, StoreError> {
        Ok(Plans::new(Box::new(SqliteStore::open(path)?)))
    }

    /// The store at `path` or, without one, at [`super::default_path`];
    /// `None` with a one-line warning when it cannot be used (the work goes
    /// on without it), and when the store is off.
    pub fn open_or_warn(path: Option<&Path>) -> Option<Plans> {
        let path = match path {
            Some(p) if super::is_off(p) => return None,
            Some(p) => p.to_path_buf(),
            None => super::default_path()?,
        };
        match Plans::open(&path) {
            Ok(p) => Some(p),
            Err(e) => {
                warn!("{e}; going on without the plan store");
                None
            }
        }
    }

    /// What the store has for a solve of `game` (`desc`, its rules as read)
    /// with these limits: its answer, when the record is final and its plan
    /// replays on the prover ([`replayed`]); else the proven bound a proof
    /// may start from; else nothing. A store that cannot be read, or a plan
    /// that does not hold, is a warning and counts as nothing stored.
    pub fn lookup(
        &self,
        desc: &Description,
        game: &Game,
        max_steps: usize,
        timeout: Option<std::time::Duration>,
    ) -> Lookup {
        let recalled = match self.recall(desc) {
            Ok(Some(r)) => r,
            Ok(None) => return Lookup::Nothing,
            Err(e) => {
                warn!("{e}; solving without the store's answer");
                return Lookup::Nothing;
            }
        };
        if recalled.entry.answers(max_steps, timeout) {
            match replayed(game, &recalled) {
                Ok(r) => return Lookup::Answer(Box::new(recalled), r),
                Err(e) => warn!(
                    "the stored plan (record {}) does not hold: {e}; solving",
                    recalled.id
                ),
            }
        }
        match recalled.entry.lower_bound.filter(|b| *b > 1) {
            Some(bound) => Lookup::Bound(bound),
            None => Lookup::Nothing,
        }
    }

    /// Where the store is, for messages.
    pub fn location(&self) -> String {
        self.backend.location()
    }

    /// The best record of `game` (its rules as read), its plan mapped into
    /// the game's names; `None` when the store does not know the game.
    pub fn recall(&self, game: &Description) -> Result<Option<Recalled>, StoreError> {
        let t0 = Instant::now();
        let fp = fingerprint::fingerprint(game);
        let mut best: Option<Stored> = None;
        for (id, stored) in self.backend.candidates(&fp)? {
            let Some(rules) = stored_rules(&stored) else {
                continue;
            };
            let Some(map) = fingerprint::find_mapping(&rules, game) else {
                continue;
            };
            let Some(plan) = translate(&stored.plan, &map, &rules, game) else {
                continue;
            };
            let entry = Entry { plan, ..stored };
            if best.as_ref().is_none_or(|(_, b)| entry.rank() > b.rank()) {
                best = Some((id, entry));
            }
        }
        Ok(best.map(|(id, entry)| Recalled {
            id,
            entry,
            seconds: t0.elapsed().as_secs_f64(),
        }))
    }

    /// Writes what a solve found about `game` (named `name` for people):
    /// merged into its record (the plan mapped into the record's names), or
    /// a new record. Whether the store changed. Errors of the solve itself
    /// are not recorded.
    pub fn remember(
        &self,
        game: &Description,
        name: &str,
        result: &SolveResult,
    ) -> Result<bool, StoreError> {
        let fp = fingerprint::fingerprint(game);
        let Some(new) = Entry::of_result(fp, name, print::description_to_string(game), result)
        else {
            return Ok(false);
        };
        self.record(&fp, game, new)
    }

    /// Merges `new` (a record of `game`, in its names) into the store.
    pub fn record(
        &self,
        fp: &Fingerprint,
        game: &Description,
        new: Entry,
    ) -> Result<bool, StoreError> {
        let mut decide = |seen: &[Stored]| {
            for (id, stored) in seen {
                let Some(rules) = stored_rules(stored) else {
                    continue;
                };
                let Some(back) = fingerprint::find_mapping(game, &rules) else {
                    continue;
                };
                let Some(plan) = translate(&new.plan, &back, game, &rules) else {
                    continue;
                };
                let mapped = Entry {
                    plan,
                    rules: stored.rules.clone(),
                    name: stored.name.clone(),
                    fingerprint: stored.fingerprint,
                    ..new.clone()
                };
                return match stored.merged(&mapped) {
                    Some(m) => Change::Replace(*id, m),
                    None => Change::Keep,
                };
            }
            Change::Insert(new.clone())
        };
        Ok(self.backend.update(fp, &mut decide)?.is_some())
    }

    /// Every record, oldest first.
    pub fn list(&self) -> Result<Vec<Stored>, StoreError> {
        self.backend.list()
    }

    /// Removes a record; whether there was one.
    pub fn forget(&self, id: i64) -> Result<bool, StoreError> {
        self.backend.remove(id)
    }

    /// Writes a job of the solving service.
    pub fn save_job(&self, job: &JobRecord) -> Result<(), StoreError> {
        self.backend.save_job(job)
    }

    /// The solving service's jobs, oldest first.
    pub fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        self.backend.jobs()
    }
}

/// A record's rules read back; `None` (with a warning) when they do not
/// read, which only a store written by hand can make happen.
fn stored_rules(stored: &Entry) -> Option<Description> {
    match gdl::parse(&stored.rules, "<store>") {
        Ok(d) => Some(d),
        Err(e) => {
            warn!("a stored game's rules do not read ({e}); skipping it");
            None
        }
    }
}

/// `plan`'s moves, read in `from`'s names, in `to`'s; `None` when a move
/// does not read (a record that does not belong to these rules).
fn translate(
    plan: &[String],
    map: &SymbolMap,
    from: &Description,
    to: &Description,
) -> Option<Vec<String>> {
    if plan.is_empty() {
        return Some(Vec::new());
    }
    let moves =
        gdl::parser::parse_ground_terms(&format!("({})", plan.join(" ")), &from.symbols).ok()?;
    let moves = map.plan(&moves)?;
    Some(
        moves
            .iter()
            .map(|t| print::term_to_string(t, &to.symbols))
            .collect(),
    )
}

/// The plan's first moves, on which a replay chooses its prover's strategy.
const REPLAY_TRIAL_STEPS: usize = 3;

/// A replay this fast goal-directed (its first moves' time over the whole
/// plan) does not try bottom-up.
const REPLAY_FAST: Duration = Duration::from_millis(10);

/// The work a bottom-up trial of the first moves may do (about 0.2 s).
const REPLAY_TRIAL_WORK: u64 = 2_000_000;

/// Sets `prover` (its static relations computed whole) to the strategy
/// that replays the first moves of `plan` faster. Timed, where the
/// prover's own choice ([`Prover::choose_strategy`]) counts work: the
/// answer is the same either way, and the work units miss what bottom-up
/// spends allocating (hidato37: less work bottom-up on the first moves, 5
/// ms goal-directed and 32 ms bottom-up for the plan;
/// factoringImpossibleTurtleBrain: 67 ms goal-directed, 22 ms bottom-up).
fn faster_strategy(prover: &Prover, plan: &[Term]) {
    let first = &plan[..plan.len().min(REPLAY_TRIAL_STEPS)];
    if first.is_empty() {
        return;
    }
    let timed = |strategy: Strategy| {
        prover.set_strategy(strategy);
        let t0 = Instant::now();
        prover
            .bounded(REPLAY_TRIAL_WORK, |p| verify::replay_prefix(p, first))
            .filter(|&n| n == first.len())
            .map(|_| t0.elapsed())
    };
    let goal_directed = timed(Strategy::GoalDirected);
    if goal_directed.is_some_and(|t| t * plan.len() as u32 / first.len() as u32 <= REPLAY_FAST) {
        return;
    }
    match (goal_directed, timed(Strategy::BottomUp)) {
        (Some(gd), Some(bu)) if bu < gd => {}
        (None, Some(_)) => {}
        _ => prover.set_strategy(Strategy::GoalDirected),
    }
}

/// `recalled`'s answer for `game` (the game looked up), its plan replayed
/// on the prover first: the answer `solve` gives from the store. An error
/// says why the stored plan does not hold here.
pub fn replayed(game: &Game, recalled: &Recalled) -> Result<SolveResult, String> {
    let t0 = Instant::now();
    let e = &recalled.entry;
    let mut r = e.to_result();
    if let Some(goal) = e.goal {
        let moves =
            gdl::parser::parse_ground_terms(&format!("({})", e.plan.join(" ")), &game.symbols)?;
        let (prover, whole) = replay_prover(game).map_err(|e| e.to_string())?;
        // Static relations on demand are read goal-directed only.
        if whole {
            faster_strategy(&prover, &moves);
        }
        // As the solver checks its own plans: the goal stored among the
        // terminal state's values (a defective game may give several).
        verify::verify(&prover, &moves, goal)?;
    }
    r.source = Source::Store;
    r.total_s = recalled.seconds + t0.elapsed().as_secs_f64();
    r.message = format!(
        "from the plan store (record {}, {} on {} by {}; {:.1} s of solving)",
        recalled.id,
        match (e.outcome, e.goal) {
            (super::Outcome::NoPlan, _) => "no plan proven".to_string(),
            (_, Some(g)) => format!(
                "{} moves to goal {g}, proven {}",
                e.plan.len(),
                e.proven.name()
            ),
            (_, None) => format!(
                "no plan found, bound {}",
                e.lower_bound.map_or("-".into(), |b| b.to_string())
            ),
        },
        e.solved_at,
        e.solver,
        e.seconds
    );
    Ok(r)
}
