//! The strategy builder: how a searcher is set up for a match, in one place
//! for the referee's in-process players (`arena::strategies`) and the GGP
//! player (`player::session`), which both import it; it imports neither.
//!
//! - [`UctSetup`]: UCT's settings for a match (threads, seed, playout
//!   steps, enhancements, iterations a move for reproducible play) and a
//!   learned model with how it is used ([`ModelUse`]); it names the
//!   configuration (`uct+mast+widen`, `nn-uct`, ...) and builds the search
//!   with the model wired in.
//! - [`meta_choice`]: the meta-choice: the game's profile
//!   ([`crate::search::meta`]) within a budget, the searcher chosen from it
//!   with its name and the reason in words. How long the profile may take
//!   ([`profile_budget`]) is the callers' to decide: the referee gives it a
//!   part of the start clock, the player moves it to the first play clock
//!   when the start clock is too short.
//!   The meta-choice takes the match's move time: where whole random
//!   playouts do not fit a move, UCT scores the states it reaches by what
//!   the rules say of them ([`crate::search::heuristic`]).
//! - [`quick_setup`]: the same decision for a search that must start at
//!   once, without a profile: a few percent of a move spent on random
//!   playouts say whether they fit.
//! - [`model_leaf`]: a model's value as alpha-beta's leaf score.
//!
//! Callers log the choice in their own words; nothing here prints.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::learn::{Model, NetEvaluator};
use crate::reasoner::{PlayoutLimits, RoleIdx, StateMachine};
use crate::search::minimax::{Leaf, Minimax};
use crate::search::{heuristic, meta};
use crate::search::{Enhancements, Mcts, SearchConfig};

/// How UCT plays with a learned model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ModelUse {
    /// Its value scores the leaves, no playouts (`nn-uct`).
    Leaves,
    /// Its value of the state a random playout starts from, weighted `w`
    /// against the playout's outcome (`nn-mix`).
    Mix(f64),
    /// Its value of each node the search adds, counted as this many visits
    /// on the edge into it (`nn-prior`).
    Prior(u32),
    /// Only its exploration constant, random playouts as plain UCT
    /// (`uct-tuned`).
    Exploration,
}

/// UCT as it plays a match: the search's settings, a learned model and how
/// it is used, and, for reproducible play, the iterations of each move.
#[derive(Clone)]
pub struct UctSetup {
    pub cfg: SearchConfig,
    model: Option<(Arc<Model>, ModelUse)>,
    iterations: Option<u64>,
}

impl UctSetup {
    /// Plain UCT on `threads` threads (at least one), seeded with `seed`.
    pub fn new(threads: usize, seed: u64) -> Self {
        UctSetup::from_config(SearchConfig {
            seed,
            threads: threads.max(1),
            ..SearchConfig::default()
        })
    }

    /// UCT with the settings `cfg`.
    pub fn from_config(cfg: SearchConfig) -> Self {
        UctSetup {
            cfg,
            model: None,
            iterations: None,
        }
    }

    /// Cuts playouts off after `n` joint moves (scored by the game's goals there).
    pub fn with_playout_steps(mut self, n: usize) -> Self {
        self.cfg.max_playout_steps = n;
        self
    }

    /// Runs the search with `e` (RAVE, widening, MAST, cut-off, GIFL, the
    /// heuristic). A search scored by the heuristic explores with its own
    /// constant ([`heuristic::EXPLORATION`]), unless a model sets one.
    pub fn with_enhancements(mut self, e: Enhancements) -> Self {
        self.cfg.enhancements = e;
        if e.heuristic && self.model.is_none() {
            self.cfg.exploration = heuristic::EXPLORATION;
        }
        self
    }

    /// Whether the search scores the states it reaches by the heuristic
    /// ([`crate::search::heuristic`]), read from the rules of whichever
    /// engine [`UctSetup::search`] is given.
    pub fn heuristic(&self) -> bool {
        self.cfg.enhancements.heuristic
    }

    /// Keeps at most `n` nodes over all trees.
    pub fn with_node_limit(mut self, n: usize) -> Self {
        self.cfg.node_limit = n;
        self
    }

    /// Runs exactly `n` iterations a move on one thread instead of searching
    /// to the clock: reproducible play.
    pub fn with_iterations(mut self, n: u64) -> Self {
        self.iterations = Some(n);
        self.cfg.threads = 1;
        self
    }

    /// Plays with `model` as `used` says, with the model's exploration
    /// constant (tuned with it); its value at the leaves replaces the
    /// playouts.
    pub fn with_model(mut self, model: Arc<Model>, used: ModelUse) -> Self {
        self.cfg.exploration = model.exploration;
        if used == ModelUse::Leaves {
            self.cfg.max_playout_steps = 0;
        }
        self.model = Some((model, used));
        self
    }

    /// The iterations of each move, when play is reproducible.
    pub fn iterations(&self) -> Option<u64> {
        self.iterations
    }

    /// The configuration's name, as the referee's `--player` spells it.
    pub fn name(&self) -> String {
        match self.model.as_ref().map(|(_, used)| used) {
            Some(ModelUse::Leaves) => "nn-uct".into(),
            Some(ModelUse::Mix(_)) => "nn-mix".into(),
            Some(ModelUse::Prior(_)) => "nn-prior".into(),
            Some(ModelUse::Exploration) => "uct-tuned".into(),
            None if self.cfg.enhancements.is_plain() => "uct".into(),
            None => format!("uct+{}", self.cfg.enhancements),
        }
    }

    /// A search of `machine` from `state`, the model wired in, or the
    /// heuristic read from `machine`'s rules (by [`Mcts::new`]): a player
    /// that changes engines mid-match builds the search again on the new
    /// one from the same setup. GIFL's features are the caller's to learn
    /// ([`Mcts::learn_features`]), on its clock.
    pub fn search<M: StateMachine + 'static>(&self, machine: Arc<M>, state: M::State) -> Mcts<M> {
        let s = Mcts::new(Arc::clone(&machine), state, self.cfg.clone());
        let Some((model, used)) = &self.model else {
            return s;
        };
        let net = || Arc::new(NetEvaluator::new(Arc::clone(model), &*machine));
        match *used {
            ModelUse::Leaves => s.with_evaluator(net()),
            ModelUse::Mix(w) => s.with_leaf_value(net(), w),
            ModelUse::Prior(n) => s.with_leaf_prior(net(), n),
            ModelUse::Exploration => s,
        }
    }
}

/// A model's value (0..100) as alpha-beta's score of a leaf at the depth
/// limit (`nn-alphabeta`).
pub fn model_leaf<M: StateMachine + 'static>(model: &Arc<Model>, machine: &M) -> Leaf<M> {
    let net = NetEvaluator::new(Arc::clone(model), machine);
    Arc::new(move |machine: &M, state: &M::State, role| 100.0 * net.value(machine, state, role))
}

/// How long the meta-choice's profile may take out of `clock`: a quarter,
/// 2 s at most.
pub fn profile_budget(clock: Duration) -> Duration {
    (clock / 4).min(Duration::from_secs(2))
}

/// The searcher the meta-choice chose.
pub enum Searcher<M: StateMachine> {
    /// UCT with the enhancements chosen.
    Uct(UctSetup),
    /// Paranoid alpha-beta, which proved the game's value in the profile: the
    /// searcher that did, its table holding the proof.
    AlphaBeta(Minimax<M>),
}

/// What the meta-choice chose, its name and why.
pub struct Strategy<M: StateMachine> {
    pub searcher: Searcher<M>,
    /// `alphabeta`, `uct`, `uct+mast+widen`, ...
    pub name: String,
    /// The profile's findings and the reasons, in words for the log.
    pub why: String,
}

/// The meta-choice: profiles `machine` from `state` for `role` within about
/// `budget` ([`meta::profile_keeping`]) and chooses for moves of
/// `move_time` ([`meta::choose_for_clock`]): alpha-beta when it proved the
/// game, else UCT as `uct` with the enhancements chosen, scored by the
/// heuristic where whole playouts do not fit a move.
pub fn meta_choice<M: StateMachine + 'static>(
    machine: &Arc<M>,
    state: &M::State,
    role: RoleIdx,
    budget: Duration,
    move_time: Duration,
    uct: UctSetup,
) -> Strategy<M> {
    let (profile, proven) = meta::profile_keeping(machine, state, role, budget);
    let (choice, mut why) = meta::choose_for_clock(&profile, move_time);
    if matches!(choice, meta::Choice::Uct(e) if e.heuristic) {
        why = format!("{why} ({})", heuristic_in_words(&**machine));
    }
    let searcher = match (choice, proven) {
        (meta::Choice::AlphaBeta, Some(ab)) => Searcher::AlphaBeta(ab),
        // `choose` picks alpha-beta only on a proof, which comes with its
        // searcher: a fresh one stands in should that ever change.
        (meta::Choice::AlphaBeta, None) => Searcher::AlphaBeta(Minimax::new(
            Arc::clone(machine),
            role,
            crate::search::minimax::Kind::Paranoid,
        )),
        (meta::Choice::Uct(e), _) => Searcher::Uct(uct.with_enhancements(e)),
    };
    let name = match &searcher {
        Searcher::AlphaBeta(_) => "alphabeta".to_string(),
        Searcher::Uct(u) => u.name(),
    };
    Strategy {
        searcher,
        name,
        why,
    }
}

/// UCT iterations a move in the trial matches ([`trial_choice`]): a count,
/// so the trials mean the same on every machine.
pub const TRIAL_ITERATIONS: u64 = 400;
/// Trial matches a candidate plays at most.
pub const TRIAL_MATCHES: u32 = 16;
/// Points above an even score a candidate needs to replace the pick (and
/// at least twice its standard error: [`crate::search::trials::better`]).
pub const TRIAL_MARGIN: f64 = 15.0;

/// The configurations tried against the pick `e`: the pick with
/// transpositions merged, with implicit minimax, with MAST's finishing
/// moves (where it has MAST), plain UCT and UCT with MAST (where the pick
/// is neither).
pub fn trial_candidates(e: Enhancements) -> Vec<Enhancements> {
    let mut out = vec![
        Enhancements {
            transpositions: true,
            ..e
        },
        Enhancements {
            minimax: Some(crate::search::enhance::MINIMAX_ALPHA),
            ..e
        },
    ];
    if e.mast.is_some() {
        out.push(Enhancements { finish: true, ..e });
    }
    out.push(Enhancements::default());
    out.push(Enhancements {
        mast: Some(crate::search::enhance::MAST_TAU),
        ..Enhancements::default()
    });
    out.retain(|c| *c != e);
    out.dedup();
    out
}

/// The meta-choice's pick put to trial matches until `end`
/// ([`crate::search::trials`]): in a two-player game where UCT was picked
/// (and is not scored by the heuristic), each of [`trial_candidates`]
/// plays the pick at [`TRIAL_ITERATIONS`] a move, and one that beats it
/// by more than chance ([`TRIAL_MARGIN`]) replaces it. The strategy
/// unchanged otherwise; the trials' scores join its reasons.
pub fn trial_choice<M: StateMachine + 'static>(
    machine: &Arc<M>,
    state: &M::State,
    chosen: Strategy<M>,
    end: Instant,
) -> Strategy<M> {
    let Searcher::Uct(uct) = &chosen.searcher else {
        return chosen;
    };
    let pick = uct.cfg.enhancements;
    if machine.num_roles() != 2 || pick.heuristic || pick.gifl.is_some() {
        return chosen;
    }
    let candidates = trial_candidates(pick);
    let trials = crate::search::trials::trials(
        machine,
        state,
        pick,
        &candidates,
        TRIAL_ITERATIONS,
        TRIAL_MATCHES,
        end,
    );
    let scores: Vec<String> = trials
        .iter()
        .map(|t| format!("uct+{} {:.1} in {}", t.candidate, t.mean, t.matches))
        .collect();
    let winner = crate::search::trials::better(&trials, TRIAL_MARGIN).map(|t| t.candidate);
    let why = format!(
        "{}; trial matches against it at {TRIAL_ITERATIONS} iterations a move: {}{}",
        chosen.why,
        if scores.is_empty() {
            "none played".into()
        } else {
            scores.join(", ")
        },
        match winner {
            Some(w) => format!("; uct+{w} beat it and plays"),
            None => "; none beat it by more than chance".into(),
        }
    );
    match winner {
        Some(w) => {
            let u = uct.clone().with_enhancements(w);
            Strategy {
                name: u.name(),
                searcher: Searcher::Uct(u),
                why,
            }
        }
        None => Strategy { why, ..chosen },
    }
}

/// The share of a move [`quick_setup`] spends on random playouts.
pub const QUICK_SHARE: u32 = 32;

/// Whether whole random playouts fit a move of `move_time` on `machine`,
/// found in `move_time / QUICK_SHARE` (about 3%) by playing random playouts
/// from `state` as `uct` would ([`UctSetup::cfg`]'s playout steps), and the
/// setup to search with: `uct` as it is where they fit (or the game has one
/// role), else UCT scored by the heuristic ([`crate::search::heuristic`])
/// with `uct`'s threads, seed, node limit and iterations. For a search that
/// must start at once, with no time for a profile (a slow engine serving
/// while a faster one is built). The reason comes in words for the log.
pub fn quick_setup<M: StateMachine + 'static>(
    machine: &Arc<M>,
    state: &M::State,
    move_time: Duration,
    uct: UctSetup,
) -> (UctSetup, String) {
    let t0 = Instant::now();
    let deadline = t0 + move_time / QUICK_SHARE;
    let limits = PlayoutLimits {
        max_steps: uct.cfg.max_playout_steps,
        deadline: Some(deadline),
        sure_wins: false,
    };
    let mut rng = SmallRng::seed_from_u64(uct.cfg.seed);
    let mut goals = Vec::new();
    let mut finished = 0u64;
    while Instant::now() < deadline {
        if machine.playout(state, &mut rng, limits, &mut goals).cut {
            break;
        }
        finished += 1;
    }
    let spent = t0.elapsed().as_secs_f64().max(1e-9);
    let secs = move_time.as_secs_f64();
    let rate = finished as f64 / spent;
    let fits = heuristic::playouts_fit(rate, secs);
    let measured = format!(
        "{finished} random playouts in {:.3} s: {:.0} fit a move of {secs:.1} s",
        spent,
        rate * secs
    );
    if fits || machine.num_roles() < 2 {
        let why = format!("{measured}; {} as set up", uct.name());
        return (uct, why);
    }
    let e = Enhancements {
        heuristic: true,
        ..Enhancements::default()
    };
    let why = format!(
        "{measured}, under {}: the search scores the states it reaches by the heuristic ({})",
        heuristic::MIN_PLAYOUTS_PER_MOVE,
        heuristic_in_words(&**machine)
    );
    (uct.with_enhancements(e), why)
}

/// The heuristic `machine`'s rules give, in words.
fn heuristic_in_words<M: StateMachine>(machine: &M) -> String {
    heuristic::Heuristic::new(machine).describe(machine.game())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reasoner::Prover;

    fn prover(file: &str) -> Arc<Prover> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games")
            .join(file);
        Arc::new(Prover::try_new(crate::gdl::load(&path).expect("loads")).expect("builds"))
    }

    /// A move too short for any playout: chess is searched by the heuristic,
    /// with its exploration constant and the setup's other settings kept; a
    /// one-player game keeps its setup.
    #[test]
    fn quick_setup_takes_the_heuristic_where_no_playout_fits_a_move() {
        let m = prover("chess_200.kif");
        let uct = UctSetup::new(1, 7).with_iterations(40);
        let (setup, why) = quick_setup(&m, &m.initial_state(), Duration::from_nanos(1), uct);
        assert!(setup.heuristic(), "{why}");
        assert_eq!(setup.name(), "uct+heuristic");
        assert_eq!(setup.cfg.exploration, heuristic::EXPLORATION);
        assert_eq!((setup.iterations(), setup.cfg.seed), (Some(40), 7));
        assert!(why.contains("cell/4 #3"), "{why}");
        let one = prover("8puzzle.kif");
        let (setup, why) = quick_setup(
            &one,
            &one.initial_state(),
            Duration::from_nanos(1),
            UctSetup::new(1, 7),
        );
        assert!(!setup.heuristic(), "{why}");
    }

    /// Tic-tac-toe's playouts are nine moves at most: the thirty-second of
    /// a 3.2 s move that `quick_setup` spends holds hundreds of them on the
    /// prover, where one is enough to fit thirty a move.
    #[test]
    fn quick_setup_keeps_the_setup_where_playouts_fit() {
        let m = prover("ticTacToe.kif");
        let uct = UctSetup::new(1, 7).with_enhancements("mast".parse().expect("parses"));
        let (setup, why) = quick_setup(&m, &m.initial_state(), Duration::from_millis(3200), uct);
        assert!(!setup.heuristic(), "{why}");
        assert_eq!(setup.name(), "uct+mast");
    }

    /// A blind pick (playouts cut off after one move and scored by a goal
    /// that says nothing before the end) in connect four is beaten in its
    /// trial matches and replaced; the reasons give every candidate's score.
    /// Counted in iterations: the same on any machine.
    #[test]
    fn trial_matches_replace_a_blind_pick() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games/connectFour.kif");
        let game = crate::gdl::load(&path).expect("loads");
        let m = Arc::new(crate::reasoner::Propnet::new(game).expect("compiles"));
        let blind: Enhancements = "cutoff:1".parse().expect("parses");
        let uct = UctSetup::new(1, 7).with_enhancements(blind);
        let chosen = Strategy {
            name: uct.name(),
            searcher: Searcher::Uct(uct),
            why: "blind".into(),
        };
        let far = Instant::now() + Duration::from_secs(3600);
        let s = trial_choice(&m, &m.initial_state(), chosen, far);
        assert_ne!(s.name, "uct+cutoff:1", "{}", s.why);
        assert!(s.why.contains("beat it and plays"), "{}", s.why);
        assert_eq!(s.why.matches(" in 16").count(), 4, "{}", s.why);
    }
}
