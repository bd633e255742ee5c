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
//! - [`model_leaf`]: a model's value as alpha-beta's leaf score.
//!
//! Callers log the choice in their own words; nothing here prints.

use std::sync::Arc;
use std::time::Duration;

use crate::learn::{Model, NetEvaluator};
use crate::reasoner::{RoleIdx, StateMachine};
use crate::search::meta;
use crate::search::minimax::{Leaf, Minimax};
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

    /// Runs the search with `e` (RAVE, widening, MAST, cut-off, GIFL).
    pub fn with_enhancements(mut self, e: Enhancements) -> Self {
        self.cfg.enhancements = e;
        self
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

    /// A search of `machine` from `state`, the model wired in. GIFL's
    /// features are the caller's to learn ([`Mcts::learn_features`]), on
    /// its clock.
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
/// `budget` ([`meta::profile_keeping`]) and chooses ([`meta::choose`]):
/// alpha-beta when it proved the game, else UCT as `uct` with the
/// enhancements chosen.
pub fn meta_choice<M: StateMachine + 'static>(
    machine: &Arc<M>,
    state: &M::State,
    role: RoleIdx,
    budget: Duration,
    uct: UctSetup,
) -> Strategy<M> {
    let (profile, proven) = meta::profile_keeping(machine, state, role, budget);
    let (choice, why) = meta::choose(&profile);
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
