//! A match's worker thread once the rules are compiled: it keeps our copy of the
//! state, searches (between messages too), follows solver plans on one-player
//! games, and answers PLAY and STOP.
//!
//! This file owns what the worker shares with the server's handle on the
//! match ([`super::session`], which starts the worker and imports from here,
//! never the other way): the commands it answers, the cancel flag and the
//! decisions' counts; the fallback move it publishes is [`super::fallback`]'s.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tracing::{debug, info, warn};

use crate::gdl::print::term_to_string;
use crate::gdl::{Game, Term};
use crate::reasoner::anytime::{self, Building, Built, Spare};
use crate::reasoner::{AnyMachine, RoleIdx, StateMachine};
use crate::search::minimax::Minimax;
use crate::search::Mcts;

use super::decisions::{Decision, Decisions};
use super::error::{Illegal, MatchError};
use super::fallback::{parse_manager_move, steps_ahead, steps_ahead_on, Fallback};
use super::handover::{Carried, CarriedPlan};
use super::helpers::Helpers;
use super::plan::Plan;
use super::solver::{SolverConfig, SolverState, UncheckedPlan};
use crate::protocol::SExpr;

mod solving;

/// How long the worker searches in one go before it looks at its messages.
const SLICE: Duration = Duration::from_millis(50);
/// Time between the worker's answer and the server's deadline.
pub(super) const REPLY_SLACK: Duration = Duration::from_millis(60);

type Reply = oneshot::Sender<Result<String, MatchError>>;

/// What the server asks of the worker.
pub(super) enum Command {
    Play {
        moves: Option<Vec<SExpr>>,
        deadline: Instant,
        reply: Reply,
    },
    Stop {
        moves: Option<Vec<SExpr>>,
        reply: Reply,
    },
}

/// What the worker shares with the server: the match's cancel flag and
/// fallback move (with its handle), the decisions (with every match).
#[derive(Clone)]
pub(super) struct ServerLink {
    pub cancelled: Arc<AtomicBool>,
    pub fallback: Arc<Mutex<Fallback>>,
    pub decisions: Decisions,
    pub watch: super::watch::Watch,
}

/// What the worker takes of the server's settings.
pub(super) struct WorkerConfig {
    /// How long we may think per move.
    pub move_time: Duration,
    /// Search between messages too.
    pub ponder: bool,
    /// The solver's limits, for one-player games; `None` turns it off.
    pub solver: Option<SolverConfig>,
    /// Processes searching (and solving) the match beside this one.
    pub helpers: Option<Arc<dyn Helpers>>,
}

/// The engine a worker runs on, and the one being built to replace it.
pub(super) struct EngineInUse {
    /// `prover`, `propnet` or `hybrid`: named in the log line of every move.
    pub name: &'static str,
    /// The engine chosen for the game, building while this one answers.
    pub building: Option<Building>,
    /// When the build is given up (cancelled) if it has not ended: it has
    /// had the start clock and some play clocks, and the match goes on
    /// over this engine.
    pub build_until: Option<Instant>,
    /// An engine of its own for the server's catch-up move, where this one
    /// answers under a lock ([`anytime::spare`]).
    pub spare: Option<Spare>,
}

impl EngineInUse {
    /// `machine` in use, nothing building.
    pub fn settled(machine: &AnyMachine) -> Self {
        EngineInUse {
            name: machine.name(),
            building: None,
            build_until: None,
            spare: anytime::spare(machine),
        }
    }
}

/// Why a worker's loop ended.
pub(super) enum Ended {
    /// STOP was answered, the match cancelled, or the server is gone.
    Done,
    /// The engine chosen for the game is built: the match goes on over it.
    Switch(Built),
}

/// A match's worker: our copy of the match and what chooses our moves.
pub(super) struct Worker<M: StateMachine> {
    id: String,
    machine: Arc<M>,
    engine: EngineInUse,
    /// The joint moves played, in terms (what another engine replays).
    history: Vec<Vec<Term>>,
    /// Our move sent for the current step, with the step.
    sent: Option<(usize, Term)>,
    role: RoleIdx,
    state: M::State,
    /// Joint moves played so far.
    step: usize,
    /// UCT from the current state; its tree follows the moves played.
    search: Mcts<M>,
    /// Alpha-beta, when the meta-choice found it proves the game: its moves
    /// are played, UCT's only where it has none.
    minimax: Option<Minimax<M>>,
    /// Search playouts when we last replied (or the match started): what the
    /// search did since is pondering, on the opponents' time.
    playouts_at_reply: u64,
    cfg: WorkerConfig,
    link: ServerLink,
    solver: SolverState<M::State>,
    plan: Option<Plan<M>>,
    /// The step and state the helpers' solvers work from (a portfolio beside
    /// our own run), until a plan is taken.
    portfolio: Option<(usize, M::State)>,
}

impl<M: StateMachine + 'static> Worker<M> {
    /// The worker of match `id` at its start, `role` ours, thinking with
    /// `search` and, when the meta-choice chose it, `minimax`.
    pub fn new(
        id: String,
        (machine, engine): (Arc<M>, EngineInUse),
        role: RoleIdx,
        (search, minimax): (Mcts<M>, Option<Minimax<M>>),
        cfg: WorkerConfig,
        link: ServerLink,
    ) -> Self {
        let one_player = machine.num_roles() == 1;
        Worker {
            solver: SolverState::new(&id, cfg.solver.clone(), one_player),
            state: search.state().clone(),
            id,
            machine,
            engine,
            history: Vec::new(),
            sent: None,
            role,
            step: 0,
            search,
            minimax,
            playouts_at_reply: 0,
            cfg,
            link,
            plan: None,
            portfolio: None,
        }
    }

    fn game(&self) -> &Game {
        self.machine.game()
    }

    fn move_text(&self, m: &M::Move) -> String {
        term_to_string(&self.machine.move_term(m), &self.game().symbols)
    }

    fn cancelled(&self) -> bool {
        self.link.cancelled.load(Ordering::Relaxed)
    }

    /// The start clock's rest, until `until`: waits while the solver plans
    /// (until it has answered) or the chosen engine builds (until it is
    /// built: then it is returned, for the match to go on over it). The
    /// search runs meanwhile; while the solver plans, only in the last part
    /// of the wait (see [`Worker::search_or_wait`]).
    pub(super) fn await_ready(&mut self, until: Instant) -> Option<Built> {
        let begun = Instant::now();
        while (self.solver.running() || self.engine.building.is_some()) && !self.cancelled() {
            if let Some(built) = self.poll_build() {
                return Some(built);
            }
            if Instant::now() >= until {
                if self.solver.running() {
                    info!(
                        "match {}: no plan yet at the start clock; search starts the match",
                        self.id
                    );
                }
                return None;
            }
            self.search_or_wait(begun, until);
            self.poll_solver();
        }
        None
    }

    /// The chosen engine, once its build has ended with it. A build that
    /// failed, or runs past its time, is given up: the match goes on over
    /// this engine, and the log says why.
    fn poll_build(&mut self) -> Option<Built> {
        let building = self.engine.building.as_mut()?;
        match building.poll() {
            Some(Ok(built)) if built.worth_switching() => {
                self.engine.building = None;
                return Some(built);
            }
            Some(Ok(built)) => {
                info!(
                    "match {}: the chosen engine is built after {:.3}s ({}) but not enough faster to switch: {}; the {} plays on",
                    self.id,
                    built.took.as_secs_f64(),
                    built.note,
                    built.race(),
                    self.engine.name
                );
                self.engine.building = None;
            }
            Some(Err(e)) => {
                warn!(
                    "match {}: the chosen engine does not build ({e}); the {} plays on",
                    self.id, self.engine.name
                );
                self.engine.building = None;
            }
            None if !building.pending() => self.engine.building = None,
            None => {
                if self.engine.build_until.is_some_and(|t| Instant::now() >= t) {
                    warn!(
                        "match {}: the chosen engine is still building after {:.1}s: given up; the {} plays on",
                        self.id,
                        building.elapsed().as_secs_f64(),
                        self.engine.name
                    );
                    self.engine.building = None;
                }
            }
        }
        None
    }

    /// The game's number of roles.
    pub(super) fn roles(&self) -> usize {
        self.machine.num_roles()
    }

    /// Follows a plan the plan store gave for the game (its moves in this
    /// match's names), checked on our engine like every plan; whether it was
    /// taken.
    pub(super) fn follow_stored(&mut self, recalled: &crate::store::Recalled) -> bool {
        let e = &recalled.entry;
        let found = UncheckedPlan {
            from: 0,
            state: self.machine.initial_state(),
            took: Duration::from_secs_f64(recalled.seconds),
            result: e.to_result(),
        };
        let source = format!(
            "plan store (record {}, solved {} by {})",
            recalled.id, e.solved_at, e.solver
        );
        self.step == 0 && self.take_plan(found, &source, false)
    }

    /// Tells `f` every answer of a solver run from the initial state.
    pub(super) fn remember_with(&mut self, f: super::solver::Remember) {
        self.solver.remember_with(f);
    }

    /// After taking over a match: the solver starts again from the current
    /// state unless its run went on, a verified plan is followed, or it has
    /// given up. A committed line without its run is dropped: nothing plans
    /// from its end.
    pub(super) fn resume_solver(&mut self) {
        if self.solver.running() || self.plan.as_ref().is_some_and(|p| p.goal.is_some()) {
            return;
        }
        self.plan = None;
        self.start_solver();
    }

    /// The engine this worker runs on (`prover`, `propnet`, `hybrid`).
    pub(super) fn engine_name(&self) -> &'static str {
        self.engine.name
    }

    /// What the next worker, on another engine, takes over
    /// ([`super::handover`]), in terms; this worker goes on as it was.
    pub(super) fn carried(&self) -> Carried {
        let m = &*self.machine;
        Carried {
            history: self.history.clone(),
            sent: self
                .sent
                .as_ref()
                .filter(|(at, _)| *at == self.step)
                .map(|(_, t)| t.clone()),
            plan: self.plan.as_ref().map(|p| CarriedPlan::of(m, p)),
            portfolio: self.portfolio.as_ref().map(|(from, _)| *from),
            playouts: self.search.stats().playouts,
        }
    }

    /// Ends this worker for the next one, on another engine: its solver
    /// (with the run going on) is what is not carried in terms.
    pub(super) fn into_solver(self) -> SolverState<M::State> {
        self.solver
    }

    /// Takes over a match carried from another engine: the moves played,
    /// the plan followed, the solver (its run going on) and the helpers'
    /// portfolio, their states replayed on this engine (`trajectory`, which
    /// reached this worker's state).
    pub(super) fn take_over<S>(
        &mut self,
        carried: Carried,
        solver: SolverState<S>,
        trajectory: &super::handover::Trajectory<M>,
    ) {
        let m = &*self.machine;
        self.step = carried.history.len();
        self.history = carried.history;
        self.sent = carried.sent.map(|t| (self.step, t));
        self.plan = carried.plan.and_then(|p| trajectory.plan(m, &p));
        self.solver = solver.map(|from, _| trajectory.at(from).cloned());
        self.portfolio = carried
            .portfolio
            .and_then(|from| trajectory.at(from).map(|s| (from, s.clone())));
        info!(
            "match {}: step {}: the {} takes over ({} playouts on the engine before; the plan {}, the solver {})",
            self.id,
            self.step,
            self.engine.name,
            carried.playouts,
            if self.plan.is_some() { "followed on" } else { "none" },
            if self.solver.running() { "still running" } else { "not running" },
        );
    }

    /// One slice of the time from `begun` to `until`. While the solver works on a
    /// one-player game it gets the cores: the search sleeps through the first
    /// three quarters of the time and runs only in the rest, to have a move should
    /// the plan not come.
    fn search_or_wait(&mut self, begun: Instant, until: Instant) {
        let now = Instant::now();
        let end = until.min(now + SLICE);
        if self.solver.running() {
            let search_from = begun + until.saturating_duration_since(begun) * 3 / 4;
            if now < search_from {
                std::thread::sleep(end.min(search_from).saturating_duration_since(now));
                return;
            }
        }
        self.search.search_until(end);
    }

    /// Answers commands until STOP, the server's end of the channel is gone, or
    /// the match is cancelled; or until the engine chosen for the game is
    /// built, between two commands, for the match to go on over it.
    pub(super) fn run(&mut self, rx: &Receiver<Command>) -> Ended {
        loop {
            if self.cancelled() {
                debug!("match {}: worker ends", self.id);
                return Ended::Done;
            }
            if let Some(built) = self.poll_build() {
                return Ended::Switch(built);
            }
            self.poll_solver();
            // Think for a slice (pondering), then look at the messages; a search
            // with nothing to do leaves the rest of the slice to waiting.
            let slice_end = Instant::now() + SLICE;
            if self.cfg.ponder && !self.solver.running() && !self.machine.is_terminal(&self.state) {
                self.search.search_until(slice_end);
            }
            let cmd = match rx.try_recv() {
                Ok(c) => c,
                Err(TryRecvError::Disconnected) => return Ended::Done,
                Err(TryRecvError::Empty) => {
                    match rx.recv_timeout(slice_end.saturating_duration_since(Instant::now())) {
                        Ok(c) => c,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => return Ended::Done,
                    }
                }
            };
            match cmd {
                Command::Play {
                    moves,
                    deadline,
                    reply,
                } => {
                    let _ = reply.send(self.play(moves, deadline));
                }
                Command::Stop { moves, reply } => {
                    let _ = reply.send(self.stop(moves));
                    return Ended::Done;
                }
            }
        }
    }

    /// Applies a joint move from the manager after checking it; the moves as
    /// our engine writes them.
    fn apply(&mut self, moves: &[SExpr]) -> Result<Vec<String>, MatchError> {
        let m = &*self.machine;
        let roles = m.game().roles.len();
        if moves.len() != roles {
            return Err(MatchError::JointMoveSize {
                step: self.step + 1,
                moves: moves.len(),
                roles,
            });
        }
        if m.is_terminal(&self.state) {
            return Err(MatchError::MovesAfterEnd { step: self.step });
        }
        let joint = moves
            .iter()
            .enumerate()
            .map(|(r, s)| self.manager_move(r, s))
            .collect::<Result<Vec<_>, _>>()?;
        self.state = m.next_state(&self.state, &joint);
        self.step += 1;
        self.history
            .push(joint.iter().map(|mv| m.move_term(mv)).collect());
        let before = self.search.stats().root_visits;
        self.search.advance(&joint);
        let kept = self.search.stats().root_visits;
        if before > 0 {
            info!(
                "match {}: step {}: the joint move played keeps {kept} of the tree's {before} root visits ({:.0}%)",
                self.id,
                self.step,
                100.0 * kept as f64 / before as f64
            );
        }
        Ok(joint.iter().map(|m| self.move_text(m)).collect())
    }

    /// Role `r`'s move `s` of the manager's joint move, if it is legal now.
    fn manager_move(&self, r: RoleIdx, s: &SExpr) -> Result<M::Move, MatchError> {
        let m = &*self.machine;
        let g = m.game();
        let illegal = |why: Illegal| MatchError::IllegalMove {
            step: self.step + 1,
            text: s.to_string(),
            role: term_to_string(&g.roles[r], &g.symbols),
            why,
        };
        let mv = parse_manager_move(m, s).map_err(illegal)?;
        let legal = m.legal(&self.state, r);
        if !legal.contains(&mv) {
            let mut l: Vec<String> = legal.iter().map(|x| self.move_text(x)).collect();
            l.sort();
            let legal = l.join(" ");
            return Err(illegal(Illegal::NotLegalHere { legal }));
        }
        Ok(mv)
    }

    /// Publishes a legal move for the current state so the server has something to
    /// send should the worker be late.
    pub(super) fn publish_fallback(&self, best: Option<&M::Move>) {
        let text = match best {
            Some(m) => Some(self.move_text(m)),
            None if self.machine.is_terminal(&self.state) => None,
            None => self
                .machine
                .legal(&self.state, self.role)
                .first()
                .map(|m| self.move_text(m)),
        };
        let mut fb = self.link.fallback.lock().unwrap_or_else(|p| p.into_inner());
        // The state changes with the step only: its closure is made once,
        // and again when the spare engine is ready.
        let spare = self.engine.spare.as_ref().and_then(|s| s.get());
        if fb.step != self.step || fb.catch_up.is_none() || (spare.is_some() && !fb.on_spare) {
            fb.on_spare = spare.is_some();
            fb.catch_up = Some(match spare {
                Some(engine) => {
                    steps_ahead_on(engine.clone(), self.machine.fluents(&self.state), self.role)
                }
                None => steps_ahead(Arc::clone(&self.machine), self.state.clone(), self.role),
            });
        }
        fb.step = self.step;
        fb.text = text;
    }

    fn play(&mut self, moves: Option<Vec<SExpr>>, deadline: Instant) -> Result<String, MatchError> {
        let t0 = Instant::now();
        // Counted before the move is applied: the playouts pondered belong to
        // the tree as it stood, whatever part of it the move keeps.
        let pondered = self
            .search
            .stats()
            .playouts
            .saturating_sub(self.playouts_at_reply);
        let joint = match &moves {
            Some(ms) => self.apply(ms)?,
            None => {
                if self.step > 0 {
                    warn!(
                        "match {}: PLAY with no moves at step {}; answering for the current state",
                        self.id, self.step
                    );
                }
                Vec::new()
            }
        };
        if self.machine.is_terminal(&self.state) {
            return Err(MatchError::GameOver { step: self.step });
        }
        let think_until = deadline.checked_sub(REPLY_SLACK).unwrap_or(deadline);
        if let Some(h) = &self.cfg.helpers {
            h.play(&self.id, self.step, joint, think_until);
        }
        self.publish_fallback(None);
        let legal = self.machine.legal(&self.state, self.role);
        if legal.is_empty() {
            return Err(MatchError::NoLegalMove { step: self.step });
        }
        let playouts_before = self.search.stats().playouts;
        let (mv, by) = self.choose(&legal, think_until);
        let text = self.move_text(&mv);
        self.sent = Some((self.step, self.machine.move_term(&mv)));
        self.link.decisions.count(by);
        let playouts = self.search.stats().playouts;
        info!(
            "match {}: step {}: move {text} by {}, engine {}; {} playouts ({} while pondering), {:.3}s",
            self.id,
            self.step + 1,
            by.name(),
            self.engine.name,
            playouts.saturating_sub(playouts_before),
            pondered,
            t0.elapsed().as_secs_f64()
        );
        let seen = self
            .search
            .root_stats(self.role)
            .into_iter()
            .find(|(m, _)| *m == mv)
            .map(|(_, s)| s);
        self.link.watch.played(super::watch::MoveView {
            step: self.step + 1,
            text: text.clone(),
            by: by.name().to_string(),
            engine: self.engine.name.to_string(),
            visits: seen.map_or(0, |s| s.visits),
            value: seen.filter(|s| s.visits > 0).map(|s| s.mean()),
            playouts: playouts.saturating_sub(playouts_before) + pondered,
            seconds: t0.elapsed().as_secs_f64(),
        });
        let solver = self.solver_words();
        self.link.watch.update(|v| v.solver = solver);
        self.playouts_at_reply = playouts;
        Ok(text)
    }

    /// Our move among `legal` by `think_until`, and what chose it: the plan, the
    /// only legal move, or the search.
    fn choose(&mut self, legal: &[M::Move], think_until: Instant) -> (M::Move, Decision) {
        let begun = Instant::now();
        loop {
            self.poll_solver();
            let now = Instant::now();
            let late = now >= think_until || self.cancelled();
            if let Some((m, committed)) = self.plan_move() {
                if !committed {
                    return (m, Decision::Plan);
                }
                // A committed line is played at the clock's end, to give the
                // solver the time the line was committed for.
                if late || !self.solver.running() {
                    return (m, Decision::CommittedLine);
                }
                std::thread::sleep(SLICE.min(think_until - now));
                continue;
            }
            if legal.len() == 1 {
                return (legal[0].clone(), Decision::OnlyLegalMove);
            }
            if let Some(ab) = &mut self.minimax {
                if let Some(m) = ab
                    .solve(&self.state, Some(think_until), None)
                    .filter(|a| a.complete)
                    .and_then(|a| a.best)
                    .filter(|m| legal.contains(m))
                {
                    return (m, Decision::AlphaBetaProven);
                }
                // Not proven from here (a table cleared when full): the
                // search decides from now on.
                self.minimax = None;
            }
            if late {
                if let Some(m) = self.with_helpers(legal) {
                    return (self.commit_ahead(m), Decision::SearchWithCluster);
                }
                return match self
                    .search
                    .try_best_move(self.role)
                    .filter(|m| legal.contains(m))
                {
                    Some(m) => (self.commit_ahead(m), Decision::Search),
                    None => (legal[0].clone(), Decision::FirstLegalMove),
                };
            }
            self.search_or_wait(begun, think_until);
            let best = self.search.try_best_move(self.role);
            self.publish_fallback(best.as_ref());
        }
    }

    /// With helpers: the most visited of `legal` over our root statistics
    /// and the helpers' reports that have arrived (ties to the better mean),
    /// unless our search has a proven move. `None` without helpers.
    fn with_helpers(&self, legal: &[M::Move]) -> Option<M::Move> {
        let h = self.cfg.helpers.as_ref()?;
        let (reports, helpers) = h.reports(&self.id, self.step);
        if let Some(m) = self.search.proven_move(self.role) {
            return Some(m);
        }
        let mut stats: Vec<(M::Move, String, u64, f64)> = self
            .search
            .root_stats(self.role)
            .into_iter()
            .map(|(m, s)| {
                let text = self.move_text(&m);
                (m, text, s.visits, s.sum)
            })
            .collect();
        let own: u64 = stats.iter().map(|s| s.2).sum();
        for r in &reports {
            for (text, visits, sum) in &r.moves {
                if let Some(s) = stats.iter_mut().find(|s| s.1 == *text) {
                    s.2 += visits;
                    s.3 += sum;
                }
            }
        }
        let total: u64 = stats.iter().map(|s| s.2).sum();
        let mean = |s: &(M::Move, String, u64, f64)| s.3 / s.2.max(1) as f64;
        let best = stats
            .iter()
            .filter(|s| legal.contains(&s.0))
            .max_by(|a, b| a.2.cmp(&b.2).then(mean(a).total_cmp(&mean(b))))?;
        let late: Vec<usize> = (1..=helpers)
            .filter(|rank| !reports.iter().any(|r| r.rank == *rank))
            .collect();
        info!(
            "match {}: step {}: {} of {helpers} helpers reported; root visits {own} ours, {total} in all{}",
            self.id,
            self.step + 1,
            reports.len(),
            if late.is_empty() {
                String::new()
            } else {
                format!("; left out (late or gone): ranks {late:?}")
            }
        );
        Some(best.0.clone())
    }

    fn stop(&mut self, moves: Option<Vec<SExpr>>) -> Result<String, MatchError> {
        self.solver.end_run();
        if let Some(ms) = &moves {
            self.apply(ms)?;
        }
        if !self.machine.is_terminal(&self.state) {
            let summary = format!("stopped after {} steps in a non-terminal state", self.step);
            warn!("match {}: {summary}", self.id);
            return Ok(summary);
        }
        let g = self.game();
        let mut summary = String::new();
        for (r, role) in g.roles.iter().enumerate() {
            let v = self.machine.goal(&self.state, r);
            let _ = write!(
                summary,
                "{}{}={}",
                if r > 0 { " " } else { "" },
                term_to_string(role, &g.symbols),
                v.map_or("none".to_string(), |v| v.to_string())
            );
        }
        info!(
            "match {}: over after {} steps; goals {summary}",
            self.id, self.step
        );
        let step = self.step;
        self.link.watch.update(|v| {
            v.state = "over".into();
            v.step = step;
            v.goals = Some(summary.clone());
        });
        Ok(summary)
    }

    /// The solver's state in words for the match's page (one-player games
    /// with the solver on; `None` otherwise).
    fn solver_words(&self) -> Option<String> {
        if self.roles() != 1 || !self.solver.wanted() {
            return None;
        }
        Some(match (&self.plan, self.solver.running()) {
            (Some(p), true) => format!(
                "following a plan of {} moves; the solver runs on",
                p.moves.len()
            ),
            (Some(p), false) => format!("following a plan of {} moves", p.moves.len()),
            (None, true) => "running, no plan yet".into(),
            (None, false) => "not running, no plan".into(),
        })
    }
}

/// How long the speed shown at START is measured (after "ready" is sent,
/// out of the pondering time).
const SPEED_TRIAL: Duration = Duration::from_millis(50);

impl<M: StateMachine + 'static> Worker<M> {
    /// Logs the engine's random playouts and states a second from the
    /// current state: what the search can expect, visible in the log of
    /// every match.
    pub(super) fn log_speed(&self) {
        use rand::SeedableRng;
        let (id, machine, state) = (&self.id, &*self.machine, &self.state);
        let t0 = Instant::now();
        let deadline = t0 + SPEED_TRIAL;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let (mut playouts, mut states, mut goals) = (0u64, 0u64, Vec::new());
        while Instant::now() < deadline {
            let limits = crate::reasoner::PlayoutLimits {
                max_steps: 10_000,
                deadline: Some(deadline),
                sure_wins: false,
            };
            let p = machine.playout(state, &mut rng, limits, &mut goals);
            states += p.steps as u64;
            if p.cut {
                break;
            }
            playouts += 1;
        }
        let secs = t0.elapsed().as_secs_f64().max(1e-9);
        info!(
            "match {id}: {:.0} playouts/s, {:.0} states/s ({playouts} random playouts in {secs:.3}s)",
            playouts as f64 / secs,
            states as f64 / secs
        );
    }
}
