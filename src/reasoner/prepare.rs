//! The preparation pipeline: which rules the engines, the solver, `encode`
//! and the player run for a game, decided in one place ([`prepare`]).
//!
//! A game our grounder grounds within [`default_limits`] runs as written.
//! One that does not (as a rule, one that no bottom-up engine runs as written
//! either) gets an exact rewrite that grounds, the least change first
//! among those that ground small ([`first_that_grounds`]):
//! [`crate::gdl::demand`] (compute only the demanded tuples of a
//! relation), after [`crate::gdl::constant`] if need be (constant fluents read
//! as static relations), on the rules as written and then on the rules with
//! their inert arguments factored out ([`crate::gdl::factor`]: what
//! ruleDepthExponential grounds on). The solver may also split joins over fluents proven
//! to hold one value ([`crate::gdl::split`]; the proof is the solver's, with
//! clingo, and is handed in). When nothing grounds, [`for_the_prover`] looks
//! for a rewrite the prover runs: the prover computes a demanded relation for
//! the state at hand only. Every rewrite is exact, so plans and plays hold in
//! the game as written.

use super::ground::{self, GroundError, GroundProgram, Limits};
use super::Prover;
use crate::gdl::split::Unique;
use crate::gdl::{constant, demand, factor, kw, Game, Relation};

/// The rules to run for a game, and how they came about.
pub struct Prepared {
    /// The rules the engines and the solver run: the game as written, or an
    /// exact rewrite of it.
    pub game: Game,
    /// Why our grounder could not ground `game` within [`default_limits`]
    /// (neither it nor any rewrite grounds).
    pub too_big: Option<String>,
    /// What was rewritten, for logs and progress output.
    pub note: Option<String>,
    /// The prover that verifies plans, when preparing built it already: on
    /// `game`.
    pub prover: Option<Prover>,
    /// For a game split by invariants, the rules as written: its plans are
    /// verified on them (on the prover [`replay_prover`] builds), not on
    /// the split whose exactness rests on the invariants. Left to the
    /// caller to build: the solver builds it beside its search.
    pub verify_on: Option<Game>,
    /// Only the prover runs `game`: neither the game nor any rewrite grounds,
    /// and the prover runs a rewrite ([`for_the_prover`]), so neither clingo
    /// nor a propnet is worth trying.
    pub prover_only: bool,
    /// The unique-value invariants `game` was split by, if it was.
    pub unique: Vec<Unique>,
    /// `game` ground within [`default_limits`], when it grounds: the
    /// grounding that decided the rules, kept so that the solver's searches
    /// and a propnet compile from it instead of grounding again.
    pub ground: Option<GroundProgram>,
}

/// Proves unique-value invariants of a game's rules of play (the solver's
/// clingo search): `None` when none are proven within its budget.
pub type UniqueProof<'a> = &'a dyn Fn(&Game) -> Option<Vec<Unique>>;

/// Prepares `game`: as written when it grounds within [`default_limits`],
/// else an exact rewrite that grounds ([`first_that_grounds`]), else (given `unique`, the
/// solver's invariant proof) its joins split by proven unique values when
/// that grounds, else the prover on the rules as written or on the rewrite
/// [`for_the_prover`] finds.
pub fn prepare(game: &Game, unique: Option<UniqueProof>) -> Prepared {
    prepare_knowing(game, unique, None, None)
}

/// [`prepare`] for a caller that has built the prover on the rules as written
/// already (`Some(true)`) or seen it fail (`Some(false)`): it is not built
/// again (a game whose static relations pass the prover's size guard takes
/// seconds to find out), and [`Prepared::prover`] is left empty when it
/// builds. `ground_failed` is how a grounding of the rules as written with
/// other limits stopped: when it took at least [`default_limits`]' join
/// steps, the rules as written are not ground again.
pub fn prepare_knowing(
    game: &Game,
    unique: Option<UniqueProof>,
    prover_builds: Option<bool>,
    ground_failed: Option<&GroundError>,
) -> Prepared {
    let as_written = |game: Game, note, ground| Prepared {
        game,
        too_big: None,
        note,
        prover: None,
        verify_on: None,
        prover_only: false,
        unique: Vec::new(),
        ground: Some(ground),
    };
    if !game.top_down.is_empty() {
        // No rewrite grounds rules with no finite extent; the prover reads
        // them goal-directed.
        let e = ground::ground(game, &default_limits())
            .err()
            .map_or_else(String::new, |e| e.to_string());
        return Prepared {
            game: game.clone(),
            too_big: Some(e),
            note: None,
            prover: Prover::try_new(game.clone()).ok(),
            verify_on: None,
            prover_only: true,
            unique: Vec::new(),
            ground: None,
        };
    }
    let limits = default_limits();
    let e = match until_it_grounds_knowing(game, &limits, ground_failed) {
        Ok((None, ground)) => return as_written(game.clone(), None, ground),
        Ok((Some(r), ground)) => return as_written(r.game, Some(r.note), ground),
        Err(e) => e,
    };
    if let Some((split, unique, ground)) =
        unique.and_then(|proof| split_by_invariants(game, &limits, proof))
    {
        return Prepared {
            game: split.game,
            too_big: None,
            note: Some(format!(
                "the game does not ground ({e}); rewritten, {}",
                split.note
            )),
            prover: None,
            verify_on: Some(game.clone()),
            prover_only: false,
            unique,
            ground: Some(ground),
        };
    }
    let too_big = Some(format!("the game does not ground within limits ({e})"));
    // A prover is needed to verify plans and for the search: on rewritten
    // rules when it cannot run them as written.
    let as_written = match prover_builds {
        None => Prover::try_new(game.clone()).map(Some).ok(),
        Some(true) => Some(None),
        Some(false) => None,
    };
    let (game, note, prover, prover_only) = match as_written {
        Some(p) => (game.clone(), None, p, false),
        None => match for_the_prover(game) {
            Some((p, r)) => (r.game, Some(r.note), Some(p), true),
            None => (game.clone(), None, None, false),
        },
    };
    Prepared {
        game,
        too_big,
        note,
        prover,
        verify_on: None,
        prover_only,
        unique: Vec::new(),
        ground: None,
    }
}

/// For a game that does not ground: its rules split by proven unique-value
/// invariants (see [`crate::gdl::split`]) when the result grounds, possibly
/// after the usual rewrites. The invariants are proven on the rules of play
/// alone, and only when our grounder (which, unlike clingo's, can be
/// stopped) grounds those within `limits`: clingo's grounding cannot be
/// interrupted.
fn split_by_invariants(
    game: &Game,
    limits: &Limits,
    proof: UniqueProof,
) -> Option<(Rewritten, Vec<Unique>, GroundProgram)> {
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
    let unique = proof(&play)?;
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
    let (rewritten, ground) = match until_it_grounds(&split, limits) {
        Ok((None, ground)) => (Rewritten { game: split, note }, ground),
        Ok((Some(r), ground)) => (
            Rewritten {
                game: r.game,
                note: format!("{note}, then {}", r.note),
            },
            ground,
        ),
        Err(_) => return None,
    };
    Some((rewritten, unique, ground))
}

/// The work a replay's prover may spend computing the static relations
/// whole before it asks for their rows on demand instead: a few
/// milliseconds (10,000,000 units take about a second).
const REPLAY_STATIC_WORK: u64 = 300_000;

/// The prover a few plans of `game` are replayed on, built at once: on the
/// rules with their inert arguments factored out ([`crate::gdl::factor`],
/// exact; ruleDepthExponential derives 2^k rows of `prereq` at step k as
/// written, k after), goal-directed, its static relations computed whole
/// where that is very little work (a replay then runs fastest, and `true`
/// says so), else on demand: one walk along one plan asks for few of their
/// rows, and some games' take seconds to compute whole, or are too large
/// to (the corpus sudoku's `exactlyOne`). Unlike [`Prover::try_new`] it
/// runs no trial: a replay needs no choice of strategy made in advance.
pub fn replay_prover(game: &Game) -> Result<(Prover, bool), super::ProverError> {
    let factored = factor::rewrite(game).map(|(g, _)| g);
    let game = factored.as_ref().unwrap_or(game);
    match Prover::try_eager_within(game.clone(), REPLAY_STATIC_WORK) {
        Ok(p) => Ok((p, true)),
        Err(_) => Ok((Prover::try_lazy(game.clone())?, false)),
    }
}

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

/// `None` when `game` grounds within `limits` as written; else a rewrite
/// that grounds ([`first_that_grounds`] says which); with the ground program
/// of the rules chosen. Or why the game as written does not ground, when
/// none does.
pub fn until_it_grounds(
    game: &Game,
    limits: &Limits,
) -> Result<(Option<Rewritten>, GroundProgram), GroundError> {
    until_it_grounds_knowing(game, limits, None)
}

/// [`until_it_grounds`], skipping the rules as written when `failed` (how
/// their grounding stopped under other limits) shows they cannot ground
/// within `limits`' join steps.
fn until_it_grounds_knowing(
    game: &Game,
    limits: &Limits,
    failed: Option<&GroundError>,
) -> Result<(Option<Rewritten>, GroundProgram), GroundError> {
    let known = failed.filter(|e| {
        e.join_steps_taken()
            .is_some_and(|n| n >= limits.max_join_steps)
    });
    let e = match known {
        Some(e) => e.clone(),
        None => match timed_ground(game, limits, "as written") {
            Ok(ground) => return Ok((None, ground)),
            Err(e) => e,
        },
    };
    match first_that_grounds(rewrites(game).collect(), limits) {
        Some((r, ground)) => Ok((
            Some(Rewritten {
                game: r.game,
                note: format!("the game does not ground ({e}); rewritten, {}", r.note),
            }),
            ground,
        )),
        None => Err(e),
    }
}

/// The rewrite of `rewrites` (least change first) that grounds within
/// `limits`. The last, which changes most, is tried first: when it does not
/// ground, neither does any other (none freezes or demands more than it),
/// and a game that grounds on none pays one trial instead of five. When it
/// grounds in `n` join steps, the others are tried in order within `n` (and
/// at least an eighth of the budget): the least change among those that
/// ground as small, after failed trials that cost little (mummymaze1p
/// grounds only on the last, and the four before it each ran to the whole
/// budget before failing; docs/benchmarks-history.md, "Grounding bounded by
/// memory: the start-up regained").
fn first_that_grounds(
    mut rewrites: Vec<Rewritten>,
    limits: &Limits,
) -> Option<(Rewritten, GroundProgram)> {
    let most = rewrites.pop()?;
    let ground = timed_ground(&most.game, limits, &most.note).ok()?;
    let small = Limits {
        max_join_steps: ground
            .join_steps
            .max(limits.max_join_steps / 8)
            .min(limits.max_join_steps),
        ..*limits
    };
    let less = rewrites
        .into_iter()
        .find_map(|r| Some((timed_ground(&r.game, &small, &r.note).ok()?, r)));
    Some(match less {
        Some((ground, r)) => (r, ground),
        None => (most, ground),
    })
}

/// [`ground::ground`], with its CPU time and outcome logged at debug level
/// (where start-up goes on a game that does not ground).
fn timed_ground(game: &Game, limits: &Limits, what: &str) -> Result<GroundProgram, GroundError> {
    let watch = crate::cputime::ThreadWatch::start();
    let r = ground::ground(game, limits);
    tracing::debug!(
        "grounding trial ({what}): {:.3} s, {}",
        watch.elapsed().as_secs_f64(),
        r.as_ref().map_or_else(
            |e| e.to_string(),
            |g| format!("grounds in {} join steps", g.join_steps)
        )
    );
    r
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
/// it changed: the constant fluents frozen and the demand rewrite, on the
/// rules as written, then on the rules with their inert arguments factored
/// out ([`crate::gdl::factor`]; ruleDepthExponential grounds only so).
/// Lazy: each is made only when the one before is turned down.
fn rewrites(game: &Game) -> impl Iterator<Item = Rewritten> + '_ {
    let as_written = variants(game, None);
    let factored = std::iter::once(()).flat_map(move |()| {
        let Some((factored, rels)) = factor::rewrite(game) else {
            return Vec::new();
        };
        let note = format!(
            "factoring the arguments that only carry a type out of {}",
            names(game, &rels)
        );
        variants(&factored, Some(&note)).collect()
    });
    as_written.chain(factored)
}

/// `base` with its constant fluents frozen and the demand rewrite, in the
/// order of [`rewrites`]; `base` alone first when it is already a rewrite
/// (`factored` says how it was made).
fn variants<'a>(base: &'a Game, factored: Option<&'a str>) -> impl Iterator<Item = Rewritten> + 'a {
    let frozen = constant::freeze(base);
    let tries = [
        (false, None),
        (false, Some(demand::Scope::Dynamic)),
        (false, Some(demand::Scope::All)),
        (true, None),
        (true, Some(demand::Scope::Dynamic)),
        (true, Some(demand::Scope::All)),
    ];
    let skip = usize::from(factored.is_none());
    tries
        .into_iter()
        .skip(skip)
        .filter_map(move |(freeze, scope)| {
            let from = match (&frozen, freeze) {
                (_, false) => base,
                (Some((g, _)), true) => g,
                (None, true) => return None,
            };
            let (rewritten, rels) = match scope {
                None => (from.clone(), Vec::new()),
                Some(scope) => demand::rewrite(from, scope)?,
            };
            let mut changes: Vec<String> = factored.iter().map(|n| n.to_string()).collect();
            if let (Some((_, fluents)), true) = (&frozen, freeze) {
                changes.push(format!(
                    "reading the constant fluents {} as static relations",
                    names(base, fluents)
                ));
            }
            if !rels.is_empty() {
                changes.push(format!(
                    "computing only the demanded tuples of {}",
                    names(base, &rels)
                ));
            }
            Some(Rewritten {
                game: rewritten,
                note: changes.join(" and "),
            })
        })
}

/// Relations as `name/arity`, comma-separated.
fn names(game: &Game, rels: &[Relation]) -> String {
    let names: Vec<String> = rels
        .iter()
        .map(|r| format!("{}/{}", game.symbols.name(r.name), r.arity))
        .collect();
    names.join(", ")
}
