//! Rewrites that make a game fit the bottom-up engines: for a game our
//! grounder cannot ground within a budget (as a rule, one that no bottom-up
//! engine runs as written either), the exact rewrites of
//! [`crate::gdl::demand`] and [`crate::gdl::constant`] are tried, from the
//! least change to the most, until one grounds. The solver runs the result
//! (see `asp::prepare`), and so does [`super::AnyMachine::build`] when no
//! engine can be built on the rules as written.

use super::ground::{self, GroundError, Limits};
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
    // From the least change to the most: static relations are computed
    // once, a rewritten one per state.
    let frozen = constant::freeze(game);
    let tries = [
        (false, Some(demand::Scope::Dynamic)),
        (false, Some(demand::Scope::All)),
        (true, None),
        (true, Some(demand::Scope::Dynamic)),
        (true, Some(demand::Scope::All)),
    ];
    for (freeze, scope) in tries {
        let base = match (&frozen, freeze) {
            (_, false) => game,
            (Some((g, _)), true) => g,
            (None, true) => continue,
        };
        let (rewritten, rels) = match scope {
            None => (base.clone(), Vec::new()),
            Some(scope) => match demand::rewrite(base, scope) {
                Some(r) => r,
                None => continue,
            },
        };
        if ground::ground(&rewritten, limits).is_err() {
            continue;
        }
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
        return Ok(Some(Rewritten {
            game: rewritten,
            note: format!(
                "the game does not ground ({e}); rewritten, {}",
                changes.join(" and ")
            ),
        }));
    }
    Err(e)
}
