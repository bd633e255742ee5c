//! The searchers a match plays with, from the strategy builder: UCT with a
//! learned model on the rules it was trained on, the meta-choice's
//! configuration on games of two and more players (alpha-beta beside it
//! when it proved the game), plain UCT otherwise, and the heuristic UCT of
//! the first engine while the chosen one builds.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::info;

use super::super::decisions::Decision;
use super::{Drive, NODE_LIMIT};
use crate::clock::{answer_within, Margin};
use crate::gdl::Game;
use crate::learn::Model;
use crate::reasoner::StateMachine;
use crate::search::minimax::Minimax;
use crate::search::Mcts;
use crate::strategy::{self, ModelUse, Searcher, UctSetup};

/// The least time the meta-choice's profile is given: below it a slow game
/// measures nothing (checkers at a 1 s start clock, most of it compiling).
const MIN_PROFILE: Duration = Duration::from_millis(150);

impl Drive<'_> {
    /// The match's searchers, from the strategy builder: UCT with the model
    /// on the rules it was trained on; else, on games of two and more
    /// players with the meta-choice on, what it chose (alpha-beta beside
    /// plain UCT when it proved the game); else plain UCT. The helpers
    /// search as we do, without the model: their statistics would not add
    /// up with ours.
    pub(super) fn searchers<M: StateMachine + 'static>(
        &mut self,
        machine: &Arc<M>,
        state: &M::State,
        engine: &str,
    ) -> (Mcts<M>, Option<Minimax<M>>) {
        let cfg = self.setup.cfg.clone();
        let one_player = machine.num_roles() == 1;
        let model = self.model_for(machine.game());
        let mut uct = UctSetup::new(cfg.threads, cfg.seed).with_node_limit(NODE_LIMIT);
        let mut minimax = None;
        if let Some(m) = &model {
            uct = uct.with_model(Arc::clone(m), ModelUse::Leaves);
            info!(
                "match {}: playing {} with the model ({} hidden units, exploration {:.3})",
                self.setup.id,
                uct.name(),
                m.network.hidden.len(),
                m.exploration
            );
        } else if cfg.meta && !one_player {
            (uct, minimax) = self.choose(machine, state, uct, engine);
        }
        if let (Some(h), None) = (&cfg.helpers, &model) {
            h.search(
                &self.setup.id,
                &uct.cfg.enhancements,
                uct.cfg.threads,
                cfg.seed,
            );
        }
        (uct.search(Arc::clone(machine), state.clone()), minimax)
    }

    /// UCT for the first engine while the chosen one builds: scored by the
    /// rules' heuristic where whole playouts do not fit a move there
    /// ([`strategy::quick_setup`]), plain otherwise.
    pub(super) fn first_uct<M: StateMachine + 'static>(
        &self,
        machine: &Arc<M>,
        state: &M::State,
    ) -> (Mcts<M>, Option<Minimax<M>>) {
        let cfg = &self.setup.cfg;
        let uct = UctSetup::new(cfg.threads, cfg.seed).with_node_limit(NODE_LIMIT);
        let move_time = answer_within(self.setup.play_clock, Margin::Network(cfg.margin));
        let (uct, why) = strategy::quick_setup(machine, state, move_time, uct);
        info!(
            "match {}: on the first engine, playing {}: {why}",
            self.setup.id,
            uct.name()
        );
        (uct.search(Arc::clone(machine), state.clone()), None)
    }

    /// The model, when there is one and it was trained on `game`'s rules;
    /// counted either way.
    fn model_for(&self, game: &Game) -> Option<Arc<Model>> {
        let model = self.setup.cfg.model.as_ref()?;
        let decisions = &self.setup.link.decisions;
        match model.check_game(game) {
            Ok(()) => {
                decisions.count(Decision::PlayedWithModel);
                Some(Arc::clone(model))
            }
            Err(e) => {
                info!("match {}: model ignored: {e}", self.setup.id);
                decisions.count(Decision::ModelIgnored);
                None
            }
        }
    }

    /// Meta-choice ([`strategy::meta_choice`]): profiles the game in at
    /// most a quarter of the time left before "ready" (2 s at most) and says
    /// what it chose and why; UCT as `uct` with the enhancements chosen, and
    /// the alpha-beta searcher when it proved the game. When that quarter is
    /// below [`MIN_PROFILE`], "ready" is sent at once and the profile takes
    /// a quarter of the first play clock instead (the first PLAY waits in
    /// the queue; its deadline is kept).
    fn choose<M: StateMachine + 'static>(
        &mut self,
        machine: &Arc<M>,
        state: &M::State,
        uct: UctSetup,
        engine: &str,
    ) -> (UctSetup, Option<Minimax<M>>) {
        let left = self
            .setup
            .ready_by
            .saturating_duration_since(Instant::now());
        let mut budget = strategy::profile_budget(left);
        if budget < MIN_PROFILE {
            self.send_ready(machine.num_roles(), engine);
            budget = strategy::profile_budget(self.setup.play_clock).max(budget);
            info!(
                "match {}: the start clock leaves {:.3} s for the profile: ready now, the profile takes {:.3} s of a play clock",
                self.setup.id,
                left.as_secs_f64(),
                budget.as_secs_f64()
            );
            self.setup
                .link
                .decisions
                .count(Decision::ProfiledAfterReady);
        }
        let chosen = strategy::meta_choice(
            machine,
            state,
            self.role,
            budget,
            self.setup.play_clock,
            uct.clone(),
        );
        match chosen.searcher {
            Searcher::AlphaBeta(ab) => {
                info!(
                    "match {}: playing alpha-beta: {}",
                    self.setup.id, chosen.why
                );
                (uct, Some(ab))
            }
            Searcher::Uct(u) => {
                info!(
                    "match {}: playing {}: {}",
                    self.setup.id, chosen.name, chosen.why
                );
                (u, None)
            }
        }
    }
}
