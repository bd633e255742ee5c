//! One match: its game, our role, our copy of the state, and the worker thread that
//! compiles the rules, thinks (between messages too) and answers PLAY and STOP.
//!
//! The async server talks to a [`Match`] only through channels, so no search or
//! compiling ever runs on the executor. Every PLAY carries a deadline (receive
//! time + play clock - margin); the worker answers before it, and should the worker
//! be late anyway (a slow state update in a huge game), the server answers with the
//! fallback move the worker published for the current step.
//!
//! On a one-player game the ASP solver runs beside the search as a child process
//! ([`super::solver`]). A verified plan is followed move by move while the real
//! state is the state the plan expects; when it is not (the search had to move
//! before the plan arrived), the solver starts again from the current state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tracing::{info, warn};

use crate::clock::{answer_within, Margin};
use crate::gdl::print::term_to_string;
use crate::gdl::{self, Game, Term};
use crate::learn::Model;
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, RoleIdx, StateMachine};
use crate::search::minimax::Minimax;
use crate::search::Mcts;
use crate::strategy::{self, ModelUse, Searcher, UctSetup};

use super::decisions::{Decision, Decisions};
use super::error::MatchError;
use super::solver::SolverConfig;
use super::worker::{Command, Fallback, ServerLink, Worker, WorkerConfig, REPLY_SLACK};
use crate::protocol::{SExpr, Start};

/// Settings shared by every match of a server.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Time kept back from each clock for the reply to travel.
    pub margin: Duration,
    /// Search threads per match.
    pub threads: usize,
    pub engine: Engine,
    /// The solver for one-player games; `None` turns it off.
    pub solver: Option<SolverConfig>,
    /// Search between messages too.
    pub ponder: bool,
    pub seed: u64,
    /// Games of two and more players: profile the game at START and choose
    /// the search ([`crate::search::meta`]); off, plain UCT.
    pub meta: bool,
    /// A learned model: on the rules it was trained on, UCT scores its
    /// leaves by the model's value with the model's exploration constant;
    /// on any other rules it is ignored (and the log says so).
    pub model: Option<Arc<crate::learn::Model>>,
    /// Processes searching every match beside this one (the ranks of an
    /// MPI job): told each move, their root statistics added to ours.
    pub helpers: Option<Arc<dyn super::Helpers>>,
}

/// Most search nodes per match (several matches may run at once).
const NODE_LIMIT: usize = 1_000_000;
/// The server stops waiting for the worker this long before the deadline, so the
/// fallback reply is out by the deadline even when the timer fires late under load.
const TIMER_SLACK: Duration = Duration::from_millis(20);

/// What a match tells the server once its rules are compiled.
#[derive(Clone, Debug)]
pub struct Ready {
    pub roles: usize,
    pub engine: String,
}

/// The server's handle on one match. Dropping it stops the worker (which kills a
/// solver child it may have).
pub struct Match {
    pub id: String,
    pub start_clock: Duration,
    pub play_clock: Duration,
    margin: Duration,
    commands: Mutex<Sender<Command>>,
    cancelled: Arc<AtomicBool>,
    fallback: Arc<Mutex<Fallback>>,
    /// Joint moves announced to the worker so far (PLAY messages with
    /// moves), in order: the one leading to step `i + 1` at `i`.
    announced: Mutex<Vec<Vec<SExpr>>>,
    helpers: Option<Arc<dyn super::Helpers>>,
}

impl Match {
    /// Starts the worker, which compiles the rules at once. The receiver says when
    /// the match is ready to play, or why it cannot be. On a one-player game with
    /// the solver on, "ready" waits for a verified plan until shortly before
    /// `ready_by`, so the solver gets the start clock before the first move is due.
    pub fn start(
        msg: &Start,
        cfg: &MatchConfig,
        ready_by: Instant,
        decisions: Decisions,
    ) -> (Match, oneshot::Receiver<Result<Ready, MatchError>>) {
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = oneshot::channel();
        let cancelled = Arc::new(AtomicBool::new(false));
        let fallback = Arc::new(Mutex::new(Fallback::default()));
        let rules = msg.rules_text();
        if let Some(h) = &cfg.helpers {
            h.start(&msg.id, &rules, &msg.role);
        }
        let setup = Setup {
            id: msg.id.clone(),
            role: msg.role.clone(),
            rules,
            cfg: cfg.clone(),
            link: ServerLink {
                cancelled: Arc::clone(&cancelled),
                fallback: Arc::clone(&fallback),
                decisions,
            },
            ready_by,
            play_clock: msg.play_clock,
        };
        let spawned = std::thread::Builder::new()
            .name(format!("match {}", msg.id))
            .spawn(move || setup.run(rx, ready_tx));
        if let Err(e) = spawned {
            warn!("match {}: cannot start its thread: {e}", msg.id);
        }
        let m = Match {
            id: msg.id.clone(),
            start_clock: msg.start_clock,
            play_clock: msg.play_clock,
            margin: cfg.margin,
            commands: Mutex::new(tx),
            cancelled,
            fallback,
            announced: Mutex::new(Vec::new()),
            helpers: cfg.helpers.clone(),
        };
        (m, ready_rx)
    }

    fn send(&self, cmd: Command) -> Result<(), MatchError> {
        self.commands
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(cmd)
            .map_err(|_| MatchError::Ended {
                id: self.id.clone(),
            })
    }

    fn no_answer(&self) -> MatchError {
        MatchError::NoAnswer {
            id: self.id.clone(),
        }
    }

    /// PLAY: our move, by `received + play clock - margin` whatever happens.
    pub async fn play(
        &self,
        moves: Option<Vec<SExpr>>,
        received: Instant,
    ) -> Result<String, MatchError> {
        let deadline = received + answer_within(self.play_clock, Margin::Network(self.margin));
        let announced = {
            let mut all = self.announced.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(joint) = &moves {
                all.push(joint.clone());
            }
            let fb = self.fallback.lock().unwrap_or_else(|p| p.into_inner());
            let since = all.get(fb.step..).unwrap_or_default().to_vec();
            (all.len(), fb.catch_up.clone(), since)
        };
        let (step, catch_up, since) = announced;
        // A legal move for this step, worked out beside the worker from the
        // state it published and the joint moves since: what is sent should
        // the worker still be on an earlier step when the clock runs out (a
        // starved thread, or a search that overran). On a thread of its
        // own: the server never waits on the engine.
        let catch_up = match catch_up {
            Some(a) if !since.is_empty() => Some(tokio::task::spawn_blocking(move || a(&since))),
            _ => None,
        };
        let (tx, rx) = oneshot::channel();
        self.send(Command::Play {
            moves,
            deadline,
            reply: tx,
        })?;
        let give_up = deadline.checked_sub(TIMER_SLACK).unwrap_or(deadline);
        match tokio::time::timeout_at(give_up.into(), rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(self.no_answer()),
            Err(_) => {
                if let Some(task) = catch_up {
                    if let Ok(Ok(Some(t))) = tokio::time::timeout_at(deadline.into(), task).await {
                        let behind = self.fallback.lock().unwrap_or_else(|p| p.into_inner()).step;
                        if behind != step {
                            warn!(
                                "match {}: worker late at step {step}, still at step {behind}; sending a legal move for step {step}",
                                self.id
                            );
                            return Ok(t);
                        }
                    }
                }
                self.fallback_move(step)
            }
        }
    }

    /// The move the worker published for the latest step it reached, sent when it
    /// is late at `step`.
    fn fallback_move(&self, step: usize) -> Result<String, MatchError> {
        let fb = self.fallback.lock().unwrap_or_else(|p| p.into_inner());
        let Some(t) = &fb.text else {
            return Err(MatchError::NoMoveYet {
                id: self.id.clone(),
            });
        };
        if fb.step != step {
            warn!(
                "match {}: worker late at step {step}; sending the move it had for step {}",
                self.id, fb.step
            );
        } else {
            warn!(
                "match {}: worker late at step {step}; sending its fallback move",
                self.id
            );
        }
        Ok(t.clone())
    }

    /// STOP: applies the last joint move and ends the worker. The answer says how
    /// the match ended (goals), or what was wrong with the moves.
    pub async fn stop(
        &self,
        moves: Option<Vec<SExpr>>,
        within: Duration,
    ) -> Result<String, MatchError> {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Stop { moves, reply: tx })?;
        match tokio::time::timeout(within, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(self.no_answer()),
            Err(_) => Ok("the worker did not confirm the final state in time".into()),
        }
    }
}

impl Match {
    /// Stops the worker at its next look (it then kills its solver), even while
    /// a request still holds the match.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
}

impl Drop for Match {
    fn drop(&mut self) {
        self.cancel();
        // Stopped, aborted or forgotten: the helpers drop it too.
        if let Some(h) = &self.helpers {
            h.stop(&self.id);
        }
    }
}

/// What the worker thread starts from.
struct Setup {
    id: String,
    role: String,
    rules: String,
    cfg: MatchConfig,
    link: ServerLink,
    ready_by: Instant,
    play_clock: Duration,
}

impl Setup {
    fn run(self, rx: Receiver<Command>, ready: oneshot::Sender<Result<Ready, MatchError>>) {
        let t0 = Instant::now();
        let (machine, role, engine_note) = match self.compile() {
            Ok(built) => built,
            Err(e) => {
                warn!("match {}: {e}", self.id);
                let _ = ready.send(Err(e));
                // Commands that arrive meanwhile are answered by the disconnect.
                return;
            }
        };
        let game = machine.game();
        let kind = match game.roles.len() {
            1 => "one-player".to_string(),
            n => format!("{n}-player"),
        };
        info!(
            "match {}: {kind} game, {} rules, we play {} (role {}), engine {engine_note}, compiled in {:.3}s",
            self.id,
            game.rules.len(),
            term_to_string(&game.roles[role], &game.symbols),
            role,
            t0.elapsed().as_secs_f64()
        );
        let r = Ready {
            roles: game.roles.len(),
            engine: machine.name().to_string(),
        };
        machine.visit(WorkerStart {
            setup: self,
            role,
            rx,
            ready: Some((ready, r)),
        });
    }

    fn compile(&self) -> Result<(AnyMachine, RoleIdx, String), MatchError> {
        let game =
            gdl::load_bytes(self.rules.as_bytes(), "START rules").map_err(MatchError::Rules)?;
        // Refused now rather than answered "ready" and failed at the first PLAY.
        let missing = game.missing();
        if !missing.is_empty() {
            return Err(MatchError::Unplayable(missing.join("; ")));
        }
        let role = game
            .symbols
            .get(&self.role)
            .and_then(|s| game.roles.iter().position(|r| *r == Term::Const(s)))
            .ok_or_else(|| MatchError::UnknownRole {
                role: self.role.clone(),
                roles: game.role_names().join(" "),
            })?;
        let (machine, note) =
            AnyMachine::build(game, self.cfg.engine).map_err(MatchError::Engine)?;
        Ok((machine, role, note))
    }
}

struct WorkerStart {
    setup: Setup,
    role: RoleIdx,
    rx: Receiver<Command>,
    ready: Option<(oneshot::Sender<Result<Ready, MatchError>>, Ready)>,
}

impl MachineVisitor for WorkerStart {
    type Output = ();
    fn visit<M: StateMachine + 'static>(mut self, machine: Arc<M>) {
        let state = machine.initial_state();
        let searchers = self.searchers(&machine, &state);
        let setup = &self.setup;
        let cfg = WorkerConfig {
            move_time: answer_within(setup.play_clock, Margin::Network(setup.cfg.margin)),
            ponder: setup.cfg.ponder,
            solver: setup.cfg.solver.clone(),
            helpers: setup.cfg.helpers.clone(),
        };
        let mut w = Worker::new(
            setup.id.clone(),
            machine,
            self.role,
            searchers,
            cfg,
            setup.link.clone(),
        );
        w.publish_fallback(None);
        w.start_solver();
        w.await_plan(
            self.setup
                .ready_by
                .checked_sub(REPLY_SLACK)
                .unwrap_or(self.setup.ready_by),
        );
        if let Some((tx, r)) = self.ready.take() {
            let _ = tx.send(Ok(r));
        }
        w.log_speed();
        w.run(self.rx);
    }
}

/// The least time the meta-choice's profile is given: below it a slow game
/// measures nothing (checkers at a 1 s start clock, most of it compiling).
const MIN_PROFILE: Duration = Duration::from_millis(150);

impl WorkerStart {
    /// The match's searchers, from the strategy builder: UCT with the model
    /// on the rules it was trained on; else, on games of two and more
    /// players with the meta-choice on, what it chose (alpha-beta beside
    /// plain UCT when it proved the game); else plain UCT. The helpers
    /// search as we do, without the model: their statistics would not add
    /// up with ours.
    fn searchers<M: StateMachine + 'static>(
        &mut self,
        machine: &Arc<M>,
        state: &M::State,
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
            (uct, minimax) = self.choose(machine, state, uct);
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
    ) -> (UctSetup, Option<Minimax<M>>) {
        let left = self
            .setup
            .ready_by
            .saturating_duration_since(Instant::now());
        let mut budget = strategy::profile_budget(left);
        if budget < MIN_PROFILE {
            if let Some((tx, r)) = self.ready.take() {
                let _ = tx.send(Ok(r));
            }
            budget = strategy::profile_budget(self.setup.play_clock).max(budget);
            info!(
                "match {}: the start clock leaves {:.3} s after the compile: ready now, the profile takes {:.3} s of the first play clock",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Message;
    use crate::reasoner::Prover;

    /// A worker that never answers (a starved thread) while the match moves
    /// on: the server sends the published move only for the step it was
    /// published for. Later, it sends a legal move of the new state, worked
    /// out from the joint moves announced since, not the stale one: in
    /// tic-tac-toe the first player's `(mark 1 1)` of step 0 is illegal at
    /// step 1 (only `noop`) and at step 2 (the cell is taken).
    #[tokio::test]
    async fn a_worker_steps_behind_still_gets_a_legal_move_sent() {
        let game = gdl::load(std::path::Path::new("../shared/games/ticTacToe.kif")).expect("loads");
        let m = Arc::new(Prover::try_new(game).expect("builds"));
        let init = m.initial_state();
        let role = 0;
        let (tx, _stuck) = mpsc::channel();
        let fallback = Fallback {
            step: 0,
            text: Some("(mark 1 1)".into()),
            catch_up: Some(super::super::worker::steps_ahead(
                Arc::clone(&m),
                init.clone(),
                role,
            )),
        };
        let game_match = Match {
            id: "m".into(),
            start_clock: Duration::from_secs(1),
            play_clock: Duration::from_millis(400),
            margin: Duration::from_millis(100),
            commands: Mutex::new(tx),
            cancelled: Arc::new(AtomicBool::new(false)),
            fallback: Arc::new(Mutex::new(fallback)),
            announced: Mutex::new(Vec::new()),
            helpers: None,
        };
        let joint = |text: &str| match Message::parse(text) {
            Ok(Message::Play { moves, .. }) => moves,
            other => panic!("not a PLAY message: {other:?}"),
        };
        let text = |mv: &<Prover as StateMachine>::Move| {
            term_to_string(&m.move_term(mv), &m.game().symbols)
        };
        let by_text = |state: &<Prover as StateMachine>::State, r: usize, t: &str| {
            *m.legal(state, r)
                .iter()
                .find(|mv| text(mv) == t)
                .unwrap_or_else(|| panic!("{t} is not legal"))
        };
        // One step behind.
        let sent = game_match
            .play(joint("(play m ((mark 1 1) noop))"), Instant::now())
            .await
            .expect("a move");
        let one = m.next_state(
            &init,
            &[by_text(&init, 0, "(mark 1 1)"), by_text(&init, 1, "noop")],
        );
        let legal: Vec<String> = m.legal(&one, role).iter().map(text).collect();
        assert!(legal.contains(&sent), "{sent} is not among {legal:?}");
        // Two steps behind.
        let sent = game_match
            .play(joint("(play m (noop (mark 2 2)))"), Instant::now())
            .await
            .expect("a move");
        let two = m.next_state(
            &one,
            &[by_text(&one, 0, "noop"), by_text(&one, 1, "(mark 2 2)")],
        );
        let legal: Vec<String> = m.legal(&two, role).iter().map(text).collect();
        assert!(legal.contains(&sent), "{sent} is not among {legal:?}");
        assert_ne!(sent, "(mark 1 1)");
    }
}
