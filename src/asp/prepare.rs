//! Preparing a game for the solver: the rewrite that makes it ground (demand,
//! constant fluents, or joins split over proven unique values), and the
//! prover that verifies its plans.

use std::time::Duration;

use super::invariants;
use crate::gdl::{kw, Game};
use crate::reasoner::{ground, rewrite, Prover};

/// The game the solver works on, and whether it grounds.
pub struct Prepared {
    pub game: Game,
    /// Why our grounder could not ground it within
    /// [`rewrite::default_limits`].
    pub too_big: Option<String>,
    /// What was rewritten, for progress output.
    pub note: Option<String>,
    /// The prover that verifies plans, when preparing built it already: on
    /// `game`, except for a game split by invariants, whose plans are
    /// verified on the rules as written (or an exact rewrite of them).
    pub prover: Option<Prover>,
    /// Only the prover runs `game`: neither the game nor any rewrite grounds,
    /// and the prover runs a rewrite ([`rewrite::for_the_prover`]), so
    /// neither clingo nor a propnet is tried in `auto`.
    pub prover_only: bool,
    /// The unique-value invariants `game` was split by, if it was (see
    /// [`split_by_invariants`]).
    pub unique: Vec<crate::gdl::split::Unique>,
}

/// Prepares a game for solving. One that our grounder cannot ground within
/// [`rewrite::default_limits`] is rewritten by [`rewrite::until_it_grounds`]
/// when that makes it ground: [`crate::gdl::demand`] (ruleDepthQuadratic:
/// 2^44 tuples bottom-up, a few dozen asked for), after
/// [`crate::gdl::constant`] if need be (mummymaze1p, whose walls are
/// fluents); every engine then runs the rewritten rules, the prover that
/// verifies plans included, and the plans, made of the same moves, hold in
/// the game as written (the rewrites are exact; the tests compare the
/// provers). A game that needs more is also one whose one-step program
/// clingo would ground far past the invariant search's budget.
pub fn prepare(game: &Game) -> Prepared {
    // clingo's grounding cannot be interrupted: a game whose relaxed program
    // our own grounder (which can) cannot finish would leave clingo grounding
    // the invariant search's one-step program long past its budget, holding
    // the lock every worker needs (ruleDepthExponential: 2^20 tuples a step,
    // half a minute).
    let limits = rewrite::default_limits();
    match rewrite::until_it_grounds(game, &limits) {
        Ok(None) => Prepared {
            game: game.clone(),
            too_big: None,
            note: None,
            prover: None,
            prover_only: false,
            unique: Vec::new(),
        },
        Ok(Some(r)) => Prepared {
            game: r.game,
            too_big: None,
            note: Some(r.note),
            prover: None,
            prover_only: false,
            unique: Vec::new(),
        },
        Err(e) => {
            if let Some((split, unique)) = split_by_invariants(game, &limits) {
                // Plans are verified on the rules as written (or an exact
                // rewrite), not on the split whose exactness rests on the
                // invariants.
                let prover = Prover::try_new(game.clone())
                    .ok()
                    .or_else(|| rewrite::for_the_prover(game).map(|(p, _)| p));
                return Prepared {
                    game: split.game,
                    too_big: None,
                    note: Some(format!(
                        "the game does not ground ({e}); rewritten, {}",
                        split.note
                    )),
                    prover,
                    prover_only: false,
                    unique,
                };
            }
            let too_big = Some(format!("the game does not ground within limits ({e})"));
            // A prover is needed to verify plans and for the search: on
            // rewritten rules when it cannot run them as written.
            let (game, note, prover, prover_only) = match Prover::try_new(game.clone()) {
                Ok(p) => (game.clone(), None, Some(p), false),
                Err(_) => match rewrite::for_the_prover(game) {
                    Some((p, r)) => (r.game, Some(r.note), Some(p), true),
                    None => (game.clone(), None, None, false),
                },
            };
            Prepared {
                game,
                too_big,
                note,
                prover,
                prover_only,
                unique: Vec::new(),
            }
        }
    }
}

/// The CPU time the invariant search behind [`split_by_invariants`] may take
/// (sudoku: 2.2 s).
const SPLIT_BUDGET: Duration = Duration::from_secs(10);

/// For a game that does not ground: its rules split by proven unique-value
/// invariants (see [`crate::gdl::split`]) when the result grounds, possibly
/// after the usual rewrites. The invariants are proven on the rules of play
/// alone, and only when our grounder (which, unlike clingo's, can be
/// stopped) grounds those within `limits`.
fn split_by_invariants(
    game: &Game,
    limits: &ground::Limits,
) -> Option<(rewrite::Rewritten, Vec<crate::gdl::split::Unique>)> {
    let play = Game::new(crate::gdl::Description {
        symbols: game.symbols.clone(),
        rules: crate::gdl::graph::keep_reached(
            game.rules.clone(),
            &[kw::ROLE, kw::INIT, kw::LEGAL, kw::NEXT, kw::TERMINAL],
        ),
        source: game.source.clone(),
    })
    .ok()?;
    ground::ground(&play, limits).ok()?;
    let unique = invariants::unique_keys(&play, SPLIT_BUDGET).ok()?;
    let (split, rels) = crate::gdl::split::split(game, &unique)?;
    let names: Vec<String> = rels
        .iter()
        .map(|r| format!("{}/{}", game.symbols.name(r.name), r.arity))
        .collect();
    let uniques: Vec<String> = unique.iter().map(|u| u.describe(&game.symbols)).collect();
    let note = format!(
        "splitting the joins of {} over fluents proven to hold one value ({})",
        names.join(", "),
        uniques.join(", ")
    );
    let rewritten = match rewrite::until_it_grounds(&split, limits) {
        Ok(None) => rewrite::Rewritten { game: split, note },
        Ok(Some(r)) => rewrite::Rewritten {
            game: r.game,
            note: format!("{note}, then {}", r.note),
        },
        Err(_) => return None,
    };
    Some((rewritten, unique))
}
