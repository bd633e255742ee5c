//! Rewrites that make a game fit the bottom-up engines: for a game our
//! grounder cannot ground within a budget (as a rule, one that no bottom-up
//! engine runs as written either), the exact rewrites of
//! [`crate::gdl::demand`] and [`crate::gdl::constant`] are tried, from the
//! least change to the most, until one grounds. The solver runs the result
//! (see `asp::prepare`), and so does [`super::AnyMachine::build`] when no
//! engine can be built on the rules as written. When no rewrite grounds,
//! [`for_the_prover`] looks for one the prover runs: the prover computes a
//! demanded relation for the state at hand only.

use super::ground::{self, GroundError, Limits};
use super::Prover;
use crate::gdl::{constant, demand, Game, Relation};

/// A game rewritten so that it grounds, and what was changed, for logs.
pub struct Rewritten {
    pub game: Game,
    pub note: String,
}

/// The budget [`until_it_grounds`] is usually given: 2 million join steps,
/// about a second of our grounder's work. A count, not a clock, so that the
/// choice does not depend on the machine's load.
pub fn default_limits() -> Limits {
    Limits {
        max_join_steps: 2_000_000,
        max_time: std::time::Duration::from_secs(10),
        ..Limits::default()
    }
}

/// `Ok(None)` when `game` grounds within `limits` as written; the first
/// rewrite that grounds; or why the game as written does not, when none does.
pub fn until_it_grounds(game: &Game, limits: &Limits) -> Result<Option<Rewritten>, GroundError> {
    let e = match ground::ground(game, limits) {
        Ok(_) => return Ok(None),
        Err(e) => e,
    };
    let found = rewrites(game).find(|r| ground::ground(&r.game, limits).is_ok());
    match found {
        Some(r) => Ok(Some(Rewritten {
            game: r.game,
            note: format!("the game does not ground ({e}); rewritten, {}", r.note),
        })),
        None => Err(e),
    }
}

/// Join steps the prover may take on [`PROVER_TRIAL_STEPS`] steps of a
/// rewritten game in [`for_the_prover`]: about two seconds of its work.
const PROVER_TRIAL_WORK: u64 = 20_000_000;
const PROVER_TRIAL_STEPS: usize = 200;

/// For a game that neither grounds nor runs on the prover as written (a
/// static relation past the prover's guard: sudoku's `exactlyOne` has 150
/// million tuples, of which play asks about a few): the first rewrite on
/// which the prover can be built and walks [`PROVER_TRIAL_STEPS`] steps
/// (goals asked at the ends) within [`PROVER_TRIAL_WORK`] join steps, with
/// the prover so built. A grounder still sees every tuple such a rewrite
/// could demand (any digit in any cell), the prover only those of the state
/// at hand.
pub fn for_the_prover(game: &Game) -> Option<(Prover, Rewritten)> {
    rewrites(game).find_map(|r| {
        let prover = Prover::try_new(r.game.clone()).ok()?;
        prover.bounded(PROVER_TRIAL_WORK, |p| {
            super::walk::walk(p, PROVER_TRIAL_STEPS, None)
        })?;
        let note = format!(
            "no engine runs the rules as written and no rewrite grounds; the prover runs them rewritten, {}",
            r.note
        );
        Some((prover, Rewritten { game: r.game, note }))
    })
}

/// The exact rewrites of `game`, from the least change to the most (static
/// relations are computed once, a rewritten one per state), each with what
/// it changed. Lazy: each is made only when the one before is turned down.
fn rewrites(game: &Game) -> impl Iterator<Item = Rewritten> + '_ {
    let frozen = constant::freeze(game);
    let tries = [
        (false, Some(demand::Scope::Dynamic)),
        (false, Some(demand::Scope::All)),
        (true, None),
        (true, Some(demand::Scope::Dynamic)),
        (true, Some(demand::Scope::All)),
    ];
    tries.into_iter().filter_map(move |(freeze, scope)| {
        let base = match (&frozen, freeze) {
            (_, false) => game,
            (Some((g, _)), true) => g,
            (None, true) => return None,
        };
        let (rewritten, rels) = match scope {
            None => (base.clone(), Vec::new()),
            Some(scope) => demand::rewrite(base, scope)?,
        };
        let names = |rels: &[Relation]| -> String {
            let names: Vec<String> = rels
                .iter()
                .map(|r| format!("{}/{}", base.symbols.name(r.name), r.arity))
                .collect();
            names.join(", ")
        };
        let mut changes = Vec::new();
        if let (Some((_, fluents)), true) = (&frozen, freeze) {
            changes.push(format!(
                "reading the constant fluents {} as static relations",
                names(fluents)
            ));
        }
        if !rels.is_empty() {
            changes.push(format!(
                "computing only the demanded tuples of {}",
                names(&rels)
            ));
        }
        Some(Rewritten {
            game: rewritten,
            note: changes.join(" and "),
        })
    })
}
