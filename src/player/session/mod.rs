//! One match: its game, our role, our copy of the state, and the worker thread that
//! thinks (between messages too) and answers PLAY and STOP.
//!
//! No preparation stands between a PLAY and a legal move: the engine chosen
//! for the game ([`crate::reasoner::anytime`]) builds on a thread of its own;
//! when it is not built within a part of the start clock ([`patience`]), the
//! match starts on the prover, which answers at once, and moves to the
//! chosen engine when it is built ([`super::handover`]), the match's state
//! and the solver's run kept.
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
use crate::gdl::{self, Description, Game, Term};
use crate::reasoner::anytime::{self, Building};
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, RoleIdx, StateMachine};

use super::decisions::{Decision, Decisions};
use super::error::MatchError;
use super::fallback::Fallback;
use super::handover::Trajectory;
use super::solver::SolverConfig;
use super::stored;
use super::watch::{MatchView, Watch};
use super::worker::{Command, Ended, EngineInUse, ServerLink, Worker, WorkerConfig, REPLY_SLACK};
use crate::protocol::{SExpr, Start};
use crate::store::Plans;

mod searchers;

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
    /// The plan store: one-player games are looked up at START (a stored
    /// plan is followed from the first move) and what the solver finds from
    /// the initial state is written to it.
    pub store: Option<Arc<Plans>>,
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
    /// What a person watching the match sees.
    pub watch: Watch,
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
        let watch = Watch::new(MatchView {
            id: msg.id.clone(),
            role: msg.role.to_string(),
            state: "starting".into(),
            start_clock_s: msg.start_clock.as_secs_f64(),
            play_clock_s: msg.play_clock.as_secs_f64(),
            started: crate::store::entry::now_utc(),
            ..MatchView::default()
        });
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
                watch: watch.clone(),
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
            watch,
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

/// How long the match waits for the engine chosen for its game before it
/// starts on the first engine (the prover, which answers at once): a
/// quarter of the start clock, 2 s at most. A game that builds within it
/// plays on its chosen engine from the start; one that takes longer starts
/// on the prover (on one-player games, the solver with it) and moves to the
/// chosen engine when it is built.
fn patience(start_left: Duration) -> Duration {
    (start_left / 4).min(Duration::from_secs(2))
}

/// Play clocks a build may run past the start clock before it is given up
/// and the match stays on the first engine.
const BUILD_PLAY_CLOCKS: u32 = 10;

impl Setup {
    fn run(self, rx: Receiver<Command>, ready: oneshot::Sender<Result<Ready, MatchError>>) {
        let t0 = Instant::now();
        let started = self.load().and_then(|(game, role, desc)| {
            let (machine, note, engine) = self.engines(game, t0)?;
            Ok((machine, role, note, engine, desc))
        });
        let (machine, role, engine_note, engine, desc) = match started {
            Ok(started) => started,
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
        let mut drive = Drive {
            setup: &self,
            role,
            rx: &rx,
            ready: Some(ready),
            desc,
        };
        machine.visit(WorkerStart {
            drive: &mut drive,
            engine,
        });
    }

    /// The rules and our role in them, or why the match cannot be played;
    /// with a plan store, the rules as read too (the store finds a game by
    /// them).
    fn load(&self) -> Result<(Game, RoleIdx, Option<Arc<Description>>), MatchError> {
        let (game, desc) = if self.cfg.store.is_some() {
            let (desc, game) = gdl::load_bytes_described(self.rules.as_bytes(), "START rules")
                .map_err(MatchError::Rules)?;
            (game, Some(Arc::new(desc)))
        } else {
            let game =
                gdl::load_bytes(self.rules.as_bytes(), "START rules").map_err(MatchError::Rules)?;
            (game, None)
        };
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
        Ok((game, role, desc))
    }

    /// The engine the match starts on, what it is, and the build of the
    /// engine chosen for the game when that is not it yet: the chosen one
    /// when it is built within [`patience`], else the first engine
    /// ([`anytime::first_engine`], built meanwhile) with the build going on.
    /// Only when no first engine builds does the match wait for the chosen
    /// one.
    fn engines(
        &self,
        game: Game,
        t0: Instant,
    ) -> Result<(AnyMachine, String, EngineInUse), MatchError> {
        let wait = patience(self.ready_by.saturating_duration_since(t0));
        let until = t0 + wait;
        let mut building = Building::start(game.clone(), self.cfg.engine, wait);
        let first = anytime::first_engine(&game, until);
        let settled = |machine: AnyMachine, note| {
            let engine = EngineInUse::settled(&machine);
            (machine, note, engine)
        };
        match (building.wait(until), first) {
            (Some(Ok(built)), Ok((machine, note))) if !built.faster() => Ok(settled(
                machine,
                format!(
                    "{note}, the chosen engine built ({}) slower: {}",
                    built.note,
                    built.race()
                ),
            )),
            (Some(Ok(built)), _) => Ok(settled(built.machine, built.note)),
            (Some(Err(e)), Ok((machine, note))) => Ok(settled(
                machine,
                format!("{note}; the chosen engine does not build: {e}"),
            )),
            (None, Ok((machine, note))) => {
                self.link.decisions.count(Decision::StartedOnFirstEngine);
                let engine = EngineInUse {
                    building: Some(building),
                    build_until: Some(self.ready_by + self.play_clock * BUILD_PLAY_CLOCKS),
                    ..EngineInUse::settled(&machine)
                };
                Ok((machine, note, engine))
            }
            (Some(Err(e)), Err(_)) => Err(MatchError::Engine(e)),
            (None, Err(first)) => {
                info!(
                    "match {}: no engine answers at once ({first}); waiting for the chosen one",
                    self.id
                );
                match building.wait(Instant::now() + Duration::from_secs(24 * 3600)) {
                    Some(Ok(built)) => Ok(settled(built.machine, built.note)),
                    Some(Err(e)) => Err(MatchError::Engine(e)),
                    None => Err(MatchError::Engine(first)),
                }
            }
        }
    }
}

/// What drives a match's workers, one engine after another: the setup, our
/// role, the server's commands, and "ready" until it is sent.
struct Drive<'a> {
    setup: &'a Setup,
    role: RoleIdx,
    rx: &'a Receiver<Command>,
    ready: Option<oneshot::Sender<Result<Ready, MatchError>>>,
    /// The rules as read, kept for the plan store (`None` without one).
    desc: Option<Arc<Description>>,
}

impl Drive<'_> {
    fn worker_config(&self) -> WorkerConfig {
        let setup = self.setup;
        WorkerConfig {
            move_time: answer_within(setup.play_clock, Margin::Network(setup.cfg.margin)),
            ponder: setup.cfg.ponder,
            solver: setup.cfg.solver.clone(),
            helpers: setup.cfg.helpers.clone(),
        }
    }

    /// Sends "ready" (once), naming the engine it is sent on.
    fn send_ready(&mut self, roles: usize, engine: &str) {
        if let Some(tx) = self.ready.take() {
            let _ = tx.send(Ok(Ready {
                roles,
                engine: engine.to_string(),
            }));
        }
    }

    /// Runs `w` until the match ends: the rest of the start clock first,
    /// then the commands. When the engine chosen for the game is built, the
    /// match goes on over it ([`Resume`]); should it not replay there, it
    /// stays on `w`.
    fn run<M: StateMachine + 'static>(&mut self, mut w: Worker<M>) {
        loop {
            let ended = if self.ready.is_some() {
                let until = self
                    .setup
                    .ready_by
                    .checked_sub(REPLY_SLACK)
                    .unwrap_or(self.setup.ready_by);
                match w.await_ready(until) {
                    Some(built) => Ended::Switch(built),
                    None => {
                        self.send_ready(w.roles(), w.engine_name());
                        w.log_speed();
                        continue;
                    }
                }
            } else {
                w.run(self.rx)
            };
            let Ended::Switch(built) = ended else {
                return;
            };
            info!(
                "match {}: the chosen engine is built after {:.3}s and faster ({}): {}",
                self.setup.id,
                built.took.as_secs_f64(),
                built.race(),
                built.note
            );
            let engine = EngineInUse::settled(&built.machine);
            match built.machine.visit(Resume {
                drive: self,
                old: w,
                engine,
            }) {
                Ok(()) => return,
                Err(back) => w = back,
            }
        }
    }
}

/// Starts a match's first worker, on `engine`.
struct WorkerStart<'a, 'b> {
    drive: &'a mut Drive<'b>,
    engine: EngineInUse,
}

impl MachineVisitor for WorkerStart<'_, '_> {
    type Output = ();
    fn visit<M: StateMachine + 'static>(self, machine: Arc<M>) {
        let drive = self.drive;
        let state = machine.initial_state();
        let searchers = if self.engine.building.is_some() {
            // The first engine: UCT set up at once until the chosen engine
            // comes (the meta-choice profiles that one).
            drive.first_uct(&machine, &state)
        } else {
            drive.searchers(&machine, &state, self.engine.name)
        };
        let mut w = Worker::new(
            drive.setup.id.clone(),
            (machine, self.engine),
            drive.role,
            searchers,
            drive.worker_config(),
            drive.setup.link.clone(),
        );
        let setup = drive.setup;
        let planned = match (&setup.cfg.store, &drive.desc) {
            (Some(store), Some(desc)) => {
                stored::use_store(store, desc, &setup.id, &setup.link.decisions, &mut w)
            }
            _ => false,
        };
        w.publish_fallback(None);
        if !planned {
            w.start_solver();
        }
        drive.run(w);
    }
}

/// Moves a match from worker `old` to a new one on the engine visited:
/// `Err(old)` when the match does not replay there (it stays on `old`).
struct Resume<'a, 'b, O: StateMachine> {
    drive: &'a mut Drive<'b>,
    old: Worker<O>,
    /// The new engine.
    engine: EngineInUse,
}

impl<O: StateMachine + 'static> MachineVisitor for Resume<'_, '_, O> {
    type Output = Result<(), Worker<O>>;
    fn visit<M: StateMachine + 'static>(self, machine: Arc<M>) -> Result<(), Worker<O>> {
        let drive = self.drive;
        let carried = self.old.carried();
        let trajectory = match Trajectory::replay(&*machine, &carried) {
            Ok(t) => t,
            Err(e) => {
                warn!(
                    "match {}: the match does not replay on the chosen engine ({e}); the {} plays on",
                    drive.setup.id,
                    self.old.engine_name()
                );
                return Err(self.old);
            }
        };
        let state = trajectory
            .at(carried.history.len())
            .expect("the history's states are replayed")
            .clone();
        drive.setup.link.decisions.count(Decision::EngineReplaced);
        let searchers = drive.searchers(&machine, &state, self.engine.name);
        let engine = self.engine;
        let mut w = Worker::new(
            drive.setup.id.clone(),
            (machine, engine),
            drive.role,
            searchers,
            drive.worker_config(),
            drive.setup.link.clone(),
        );
        w.take_over(carried, self.old.into_solver(), &trajectory);
        w.publish_fallback(None);
        w.resume_solver();
        if drive.ready.is_none() {
            w.log_speed();
        }
        drive.run(w);
        Ok(())
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
            on_spare: false,
            catch_up: Some(super::super::fallback::steps_ahead(
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
            watch: Watch::default(),
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
