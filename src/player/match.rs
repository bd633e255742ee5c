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

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tracing::{debug, info, warn};

use crate::asp::Status;
use crate::gdl::print::{rule_to_string, term_to_string};
use crate::gdl::{self, kw, Game, Term};
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, RoleIdx, StateMachine};
use crate::search::{Mcts, SearchConfig};

use super::solver::{SolverConfig, SolverRun};
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
}

/// How long the worker searches in one go before it looks at its messages.
const SLICE: Duration = Duration::from_millis(50);
impl MatchConfig {
    /// How long after receiving a message with `clock` the answer must be out.
    pub fn answer_within(&self, clock: Duration) -> Duration {
        answer_within(self.margin, clock)
    }
}

/// The clock minus the margin (half the clock when the margin is larger than that).
fn answer_within(margin: Duration, clock: Duration) -> Duration {
    if margin * 2 < clock {
        clock - margin
    } else {
        clock / 2
    }
}

/// Most search nodes per match (several matches may run at once).
const NODE_LIMIT: usize = 1_000_000;
/// Time between the worker's answer and the server's deadline.
const REPLY_SLACK: Duration = Duration::from_millis(60);
/// The server stops waiting for the worker this long before the deadline, so the
/// fallback reply is out by the deadline even when the timer fires late under load.
const TIMER_SLACK: Duration = Duration::from_millis(20);

/// What a match tells the server once its rules are compiled.
#[derive(Clone, Debug)]
pub struct Ready {
    pub roles: usize,
    pub engine: String,
}

/// How many moves each decider ("plan", "search", "only legal move", ...) chose,
/// over all matches of a server.
pub type Decisions = Arc<Mutex<BTreeMap<&'static str, u64>>>;

type Reply = oneshot::Sender<Result<String, String>>;

enum Command {
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

/// The move the worker would send now, with the number of joint moves it follows.
#[derive(Default)]
struct Fallback {
    step: usize,
    text: Option<String>,
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
    /// Joint moves announced to the worker so far (PLAY messages with moves).
    announced: AtomicUsize,
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
    ) -> (Match, oneshot::Receiver<Result<Ready, String>>) {
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = oneshot::channel();
        let cancelled = Arc::new(AtomicBool::new(false));
        let fallback = Arc::new(Mutex::new(Fallback::default()));
        let setup = Setup {
            id: msg.id.clone(),
            role: msg.role.clone(),
            rules: msg.rules_text(),
            cfg: cfg.clone(),
            cancelled: Arc::clone(&cancelled),
            fallback: Arc::clone(&fallback),
            ready_by,
            decisions,
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
            announced: AtomicUsize::new(0),
        };
        (m, ready_rx)
    }

    /// How long after receiving a message with `clock` the answer must be out.
    pub fn answer_within(&self, clock: Duration) -> Duration {
        answer_within(self.margin, clock)
    }

    fn send(&self, cmd: Command) -> Result<(), String> {
        self.commands
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(cmd)
            .map_err(|_| {
                format!(
                    "match {} has ended (its rules may have failed to compile)",
                    self.id
                )
            })
    }

    /// PLAY: our move, by `received + play clock - margin` whatever happens.
    pub async fn play(
        &self,
        moves: Option<Vec<SExpr>>,
        received: Instant,
    ) -> Result<String, String> {
        let deadline = received + self.answer_within(self.play_clock);
        let step = match &moves {
            Some(_) => self.announced.fetch_add(1, Ordering::SeqCst) + 1,
            None => self.announced.load(Ordering::SeqCst),
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
            Ok(Err(_)) => Err(format!(
                "match {}: the worker ended without an answer",
                self.id
            )),
            Err(_) => {
                let fb = self.fallback.lock().unwrap_or_else(|p| p.into_inner());
                match &fb.text {
                    Some(t) => {
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
                    None => Err(format!(
                        "match {}: no move ready by the deadline (the rules are still compiling)",
                        self.id
                    )),
                }
            }
        }
    }

    /// STOP: applies the last joint move and ends the worker. The answer says how
    /// the match ended (goals), or what was wrong with the moves.
    pub async fn stop(
        &self,
        moves: Option<Vec<SExpr>>,
        within: Duration,
    ) -> Result<String, String> {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Stop { moves, reply: tx })?;
        match tokio::time::timeout(within, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(format!(
                "match {}: the worker ended without an answer",
                self.id
            )),
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
    }
}

/// What the worker thread starts from.
struct Setup {
    id: String,
    role: String,
    rules: String,
    cfg: MatchConfig,
    cancelled: Arc<AtomicBool>,
    fallback: Arc<Mutex<Fallback>>,
    ready_by: Instant,
    decisions: Decisions,
    play_clock: Duration,
}

impl Setup {
    fn run(self, rx: Receiver<Command>, ready: oneshot::Sender<Result<Ready, String>>) {
        let t0 = Instant::now();
        let built = self.compile();
        match built {
            Err(e) => {
                warn!("match {}: {e}", self.id);
                let _ = ready.send(Err(e));
                // Commands that arrive meanwhile are answered by the disconnect.
            }
            Ok((machine, role, engine_note)) => {
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
        }
    }

    fn compile(&self) -> Result<(AnyMachine, RoleIdx, String), String> {
        let game = gdl::load_bytes(self.rules.as_bytes(), "START rules")
            .map_err(|e| format!("the rules do not load: {e}"))?;
        let role = game
            .symbols
            .get(&self.role)
            .and_then(|s| game.roles.iter().position(|r| *r == Term::Const(s)))
            .ok_or_else(|| {
                format!(
                    "the role '{}' is not in the game (roles: {})",
                    self.role,
                    game.role_names().join(" ")
                )
            })?;
        let (machine, note) = AnyMachine::build(game, self.cfg.engine)
            .map_err(|e| format!("no engine for the rules: {e}"))?;
        Ok((machine, role, note))
    }
}

struct WorkerStart {
    setup: Setup,
    role: RoleIdx,
    rx: Receiver<Command>,
    ready: Option<(oneshot::Sender<Result<Ready, String>>, Ready)>,
}

impl MachineVisitor for WorkerStart {
    type Output = ();
    fn visit<M: StateMachine + 'static>(mut self, machine: Arc<M>) {
        let state = machine.initial_state();
        let cfg = &self.setup.cfg;
        let search = Mcts::new(
            Arc::clone(&machine),
            state.clone(),
            SearchConfig {
                threads: cfg.threads.max(1),
                seed: cfg.seed,
                node_limit: NODE_LIMIT,
                ..SearchConfig::default()
            },
        );
        let mut w = Worker {
            id: self.setup.id.clone(),
            machine,
            role: self.role,
            state,
            step: 0,
            search,
            cfg: self.setup.cfg.clone(),
            cancelled: Arc::clone(&self.setup.cancelled),
            fallback: Arc::clone(&self.setup.fallback),
            decisions: Arc::clone(&self.setup.decisions),
            move_time: answer_within(self.setup.cfg.margin, self.setup.play_clock),
            solve_estimate: Duration::ZERO,
            solver: None,
            solver_gave_up: false,
            plan: None,
            playouts_at_advance: 0,
        };
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
        w.run(self.rx);
    }
}

/// Moves we follow from some step on: `states[i]` is the state expected before
/// `moves[i]`, at match step `from + i`. Either a verified solver plan (`goal` is
/// its goal), or a committed line (`goal` is `None`): moves of the search we
/// promise to play while the solver plans from the state at the line's end.
struct Plan<M: StateMachine> {
    from: usize,
    states: Vec<M::State>,
    moves: Vec<M::Move>,
    goal: Option<u8>,
}

/// A solver run and the step and state it solves from.
struct Solving<S> {
    run: SolverRun,
    from: usize,
    state: S,
}

struct Worker<M: StateMachine> {
    id: String,
    machine: Arc<M>,
    role: RoleIdx,
    state: M::State,
    /// Joint moves played so far.
    step: usize,
    /// UCT from the current state; its tree follows the moves played.
    search: Mcts<M>,
    cfg: MatchConfig,
    cancelled: Arc<AtomicBool>,
    fallback: Arc<Mutex<Fallback>>,
    decisions: Decisions,
    /// How long we may think per move.
    move_time: Duration,
    /// How long a solver run seems to take (the last one's time, or how long an
    /// abandoned one had run): decides how far ahead the next one starts.
    solve_estimate: Duration,
    solver: Option<Solving<M::State>>,
    /// The solver said there is no plan (or failed): do not start it again.
    solver_gave_up: bool,
    plan: Option<Plan<M>>,
    /// Search playouts when the last joint move was applied.
    playouts_at_advance: u64,
}

impl<M: StateMachine + 'static> Worker<M> {
    fn game(&self) -> &Game {
        self.machine.game()
    }

    fn move_text(&self, m: &M::Move) -> String {
        term_to_string(&self.machine.move_term(m), &self.game().symbols)
    }

    /// Waits until the solver has answered or `until`, whichever is first; the
    /// search only runs in the last part of the wait (see [`Worker::search_or_wait`]).
    fn await_plan(&mut self, until: Instant) {
        let begun = Instant::now();
        while self.solver.is_some() && !self.cancelled.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= until {
                info!(
                    "match {}: no plan yet at the start clock; search starts the match",
                    self.id
                );
                return;
            }
            self.search_or_wait(begun, until);
            self.poll_solver();
        }
    }

    /// One slice of the time from `begun` to `until`. While the solver works on a
    /// one-player game it gets the cores: the search sleeps through the first
    /// three quarters of the time and runs only in the rest, to have a move should
    /// the plan not come.
    fn search_or_wait(&mut self, begun: Instant, until: Instant) {
        let now = Instant::now();
        let end = until.min(now + SLICE);
        if self.solver.is_some() {
            let search_from = begun + until.saturating_duration_since(begun) * 3 / 4;
            if now < search_from {
                std::thread::sleep(end.min(search_from).saturating_duration_since(now));
                return;
            }
        }
        self.search.search_until(end);
    }

    fn run(&mut self, rx: Receiver<Command>) {
        loop {
            if self.cancelled.load(Ordering::Relaxed) {
                debug!("match {}: worker ends", self.id);
                return;
            }
            self.poll_solver();
            // Think for a slice (pondering), then look at the messages; a search
            // with nothing to do leaves the rest of the slice to waiting.
            let slice_end = Instant::now() + SLICE;
            if self.cfg.ponder && self.solver.is_none() && !self.machine.is_terminal(&self.state) {
                self.search.search_until(slice_end);
            }
            let cmd = match rx.try_recv() {
                Ok(c) => c,
                Err(TryRecvError::Disconnected) => return,
                Err(TryRecvError::Empty) => {
                    match rx.recv_timeout(slice_end.saturating_duration_since(Instant::now())) {
                        Ok(c) => c,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
            };
            match cmd {
                Command::Play {
                    moves,
                    deadline,
                    reply,
                } => {
                    let r = self.play(moves, deadline);
                    let _ = reply.send(r);
                }
                Command::Stop { moves, reply } => {
                    let r = self.stop(moves);
                    let _ = reply.send(r);
                    return;
                }
            }
        }
    }

    /// Applies a joint move from the manager after checking it.
    fn apply(&mut self, moves: &[SExpr]) -> Result<(), String> {
        let m = &*self.machine;
        let g = m.game();
        if moves.len() != g.roles.len() {
            return Err(format!(
                "the joint move at step {} has {} move(s) but the game has {} role(s)",
                self.step + 1,
                moves.len(),
                g.roles.len()
            ));
        }
        if m.is_terminal(&self.state) {
            return Err(format!(
                "the game is already over after step {}; no further moves",
                self.step
            ));
        }
        let mut joint = Vec::with_capacity(moves.len());
        for (r, s) in moves.iter().enumerate() {
            let role = term_to_string(&g.roles[r], &g.symbols);
            let illegal = |why: String| {
                format!(
                    "illegal joint move at step {}: {s} for role {role}: {why}",
                    self.step + 1
                )
            };
            let term = s.to_ground(&g.symbols).map_err(illegal)?;
            let mv = m
                .parse_move(&term)
                .ok_or_else(|| illegal("not a move of this game".into()))?;
            let legal = m.legal(&self.state, r);
            if !legal.contains(&mv) {
                let mut l: Vec<String> = legal.iter().map(|x| self.move_text(x)).collect();
                l.sort();
                return Err(illegal(format!("not legal here (legal: {})", l.join(" "))));
            }
            joint.push(mv);
        }
        self.state = m.next_state(&self.state, &joint);
        self.step += 1;
        self.search.advance(&joint);
        self.playouts_at_advance = self.search.stats().playouts;
        Ok(())
    }

    /// Publishes a legal move for the current state so the server has something to
    /// send should the worker be late.
    fn publish_fallback(&self, best: Option<&M::Move>) {
        let text = match best {
            Some(m) => Some(self.move_text(m)),
            None if self.machine.is_terminal(&self.state) => None,
            None => self
                .machine
                .legal(&self.state, self.role)
                .first()
                .map(|m| self.move_text(m)),
        };
        let mut fb = self.fallback.lock().unwrap_or_else(|p| p.into_inner());
        fb.step = self.step;
        fb.text = text;
    }

    fn play(&mut self, moves: Option<Vec<SExpr>>, deadline: Instant) -> Result<String, String> {
        let t0 = Instant::now();
        match &moves {
            Some(ms) => self.apply(ms)?,
            None if self.step > 0 => warn!(
                "match {}: PLAY with no moves at step {}; answering for the current state",
                self.id, self.step
            ),
            None => {}
        }
        if self.machine.is_terminal(&self.state) {
            return Err(format!(
                "the game is over after step {}: no move to make",
                self.step
            ));
        }
        self.publish_fallback(None);
        let legal = self.machine.legal(&self.state, self.role);
        if legal.is_empty() {
            return Err(format!(
                "our role has no legal move at step {} (the rules are broken here)",
                self.step
            ));
        }
        let think_until = deadline.checked_sub(REPLY_SLACK).unwrap_or(deadline);
        let playouts_before = self.search.stats().playouts;
        let pondered = playouts_before.saturating_sub(self.playouts_at_advance);
        let begun = Instant::now();
        let (mv, by) = loop {
            self.poll_solver();
            let now = Instant::now();
            let late = now >= think_until || self.cancelled.load(Ordering::Relaxed);
            if let Some((m, committed)) = self.plan_move() {
                if !committed {
                    break (m, "plan");
                }
                // A committed line is played at the clock's end, to give the
                // solver the time the line was committed for.
                if late || self.solver.is_none() {
                    break (m, "committed line");
                }
                std::thread::sleep(SLICE.min(think_until - now));
                continue;
            }
            if legal.len() == 1 {
                break (legal[0].clone(), "only legal move");
            }
            if late {
                match self
                    .search
                    .try_best_move(self.role)
                    .filter(|m| legal.contains(m))
                {
                    Some(m) => break (self.commit_ahead(m), "search"),
                    None => break (legal[0].clone(), "first legal move (search had none)"),
                }
            }
            self.search_or_wait(begun, think_until);
            let best = self.search.try_best_move(self.role);
            self.publish_fallback(best.as_ref());
        };
        let text = self.move_text(&mv);
        *self
            .decisions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(by)
            .or_default() += 1;
        info!(
            "match {}: step {}: move {text} by {by}; {} playouts ({} while pondering), {:.3}s",
            self.id,
            self.step + 1,
            self.search.stats().playouts.saturating_sub(playouts_before),
            pondered,
            t0.elapsed().as_secs_f64()
        );
        Ok(text)
    }

    fn stop(&mut self, moves: Option<Vec<SExpr>>) -> Result<String, String> {
        self.solver = None;
        if let Some(ms) = &moves {
            self.apply(ms)?;
        }
        let g = self.game();
        let mut summary = String::new();
        if self.machine.is_terminal(&self.state) {
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
        } else {
            summary = format!("stopped after {} steps in a non-terminal state", self.step);
            warn!("match {}: {summary}", self.id);
        }
        Ok(summary)
    }

    /// The rules with the `init` facts replaced by `state`, so the solver can plan
    /// from there.
    fn rules_from(&self, state: &M::State) -> String {
        let g = self.game();
        let mut out = String::new();
        for rule in &g.rules {
            if rule.head.name() == Some(kw::INIT) {
                continue;
            }
            out.push_str(&rule_to_string(rule, &g.symbols));
            out.push('\n');
        }
        let init = g.symbols.name(kw::INIT);
        for f in self.machine.fluents(state) {
            let _ = writeln!(out, "({init} {})", term_to_string(&f, &g.symbols));
        }
        out
    }

    /// True when the solver may run: a one-player game, the solver on, and no run
    /// has said there is nothing to find.
    fn solver_wanted(&self) -> bool {
        self.cfg.solver.is_some() && self.machine.num_roles() == 1 && !self.solver_gave_up
    }

    /// Starts the solver from the current state.
    fn start_solver(&mut self) {
        self.start_solver_from(self.step, self.state.clone());
    }

    /// Starts the solver from `state`, the state at step `from` (one-player games
    /// only), replacing any run.
    fn start_solver_from(&mut self, from: usize, state: M::State) {
        if let Some(old) = self.solver.take() {
            self.solve_estimate = self.solve_estimate.max(old.run.elapsed());
        }
        let Some(cfg) = &self.cfg.solver else { return };
        if !self.solver_wanted() || self.machine.is_terminal(&state) {
            return;
        }
        let rules = self.rules_from(&state);
        let label = format!("match {} step {from}", self.id);
        match SolverRun::start(&rules, cfg, &label) {
            Ok(run) => {
                info!(
                    "match {}: solver started from step {from} at step {} (pid {}, timeout {:.0}s, {} MB)",
                    self.id,
                    self.step,
                    run.pid(),
                    cfg.timeout.as_secs_f64(),
                    cfg.memory_mb
                );
                self.solver = Some(Solving { run, from, state });
            }
            Err(e) => {
                warn!("match {}: {e}; playing by search alone", self.id);
                self.solver_gave_up = true;
            }
        }
    }

    fn poll_solver(&mut self) {
        let Some(s) = &self.solver else { return };
        let Some(result) = s.run.try_result() else {
            return;
        };
        let (from, took) = (s.from, s.run.elapsed());
        let secs = took.as_secs_f64();
        let Some(Solving {
            state: from_state, ..
        }) = self.solver.take()
        else {
            return;
        };
        self.solve_estimate = took;
        let out = match result {
            Ok(o) => o,
            Err(e) => {
                warn!("match {}: solver failed after {secs:.2}s: {e}", self.id);
                self.solver_gave_up = true;
                return;
            }
        };
        if out.status != Status::Solved || out.plan.is_empty() {
            let why = if out.message.is_empty() {
                String::new()
            } else {
                format!(" ({})", out.message)
            };
            info!(
                "match {}: solver from step {from}: {} after {secs:.2}s{why}; search plays on",
                self.id,
                out.status.name(),
            );
            self.solver_gave_up = true;
            return;
        }
        if from < self.step {
            info!(
                "match {}: the solver's plan from step {from} came after {secs:.2}s, at step {}: too late",
                self.id, self.step
            );
            return;
        }
        match self.verify_plan(from, from_state, &out.plan) {
            Ok(plan) => {
                info!(
                    "match {}: solver from step {from}: plan of {} moves to goal {} ({} proven) in {secs:.2}s, verified",
                    self.id,
                    plan.moves.len(),
                    plan.goal.unwrap_or(0),
                    out.proven.name()
                );
                self.plan = match self.plan.take() {
                    // The committed line that leads to the plan's first state.
                    Some(mut line)
                        if line.goal.is_none() && line.from + line.moves.len() == from =>
                    {
                        line.states.extend(plan.states);
                        line.moves.extend(plan.moves);
                        line.goal = plan.goal;
                        Some(line)
                    }
                    _ if from == self.step => Some(plan),
                    _ => {
                        warn!(
                            "match {}: the plan from step {from} does not connect to our moves",
                            self.id
                        );
                        None
                    }
                };
            }
            Err(e) => {
                warn!(
                    "match {}: the solver's plan from step {from} is wrong: {e}",
                    self.id
                );
                self.solver_gave_up = true;
            }
        }
    }

    /// Replays a plan from `state` (step `from`) on our engine: every move legal,
    /// the end terminal with a goal.
    fn verify_plan(
        &self,
        from: usize,
        mut state: M::State,
        plan: &[String],
    ) -> Result<Plan<M>, String> {
        let m = &*self.machine;
        let g = m.game();
        let mut states = Vec::with_capacity(plan.len());
        let mut moves = Vec::with_capacity(plan.len());
        for (i, text) in plan.iter().enumerate() {
            if m.is_terminal(&state) {
                return Err(format!("the game ends before move {}", i + 1));
            }
            let term = SExpr::parse_one(text, "a plan move")
                .map_err(|e| e.to_string())
                .and_then(|s| s.to_ground(&g.symbols))
                .map_err(|e| format!("move {} '{text}': {e}", i + 1))?;
            let mv = m
                .parse_move(&term)
                .filter(|mv| m.legal(&state, self.role).contains(mv))
                .ok_or_else(|| format!("move {} '{text}' is not legal there", i + 1))?;
            states.push(state.clone());
            state = m.next_state(&state, std::slice::from_ref(&mv));
            moves.push(mv);
        }
        if !m.is_terminal(&state) {
            return Err("the plan does not end in a terminal state".into());
        }
        let goal = m
            .goal(&state, self.role)
            .ok_or("the plan's final state has no goal value")?;
        Ok(Plan {
            from,
            states,
            moves,
            goal: Some(goal),
        })
    }

    /// The plan's move when the current state is the one the plan expects here,
    /// and whether it is a committed move (not yet backed by a solver plan).
    fn plan_move(&mut self) -> Option<(M::Move, bool)> {
        let plan = self.plan.as_ref()?;
        let i = self.step.checked_sub(plan.from)?;
        if plan.states.get(i) == Some(&self.state) {
            return Some((plan.moves[i].clone(), plan.goal.is_none()));
        }
        if i < plan.moves.len() || plan.goal.is_some() {
            warn!(
                "match {}: step {}: the state is not the one the plan expects; search decides",
                self.id, self.step
            );
        }
        self.plan = None;
        None
    }

    /// On a one-player game without a plan: the search's move `chosen` leaves the
    /// state any solver run works from, so commit to the search's best line for as
    /// many moves as a solver run seems to take, and start the solver from the
    /// line's end. Returns the move to play now (the line's first).
    fn commit_ahead(&mut self, chosen: M::Move) -> M::Move {
        if !self.solver_wanted() {
            return chosen;
        }
        let m = &*self.machine;
        // The best complete line the search has seen, checked move by move.
        let mut line = Vec::new();
        if let Some((joints, _)) = self.search.best_line() {
            let mut state = self.state.clone();
            for joint in joints {
                let Some(mv) = joint.get(self.role) else {
                    break;
                };
                if m.is_terminal(&state) || !m.legal(&state, self.role).contains(mv) {
                    break;
                }
                state = m.next_state(&state, std::slice::from_ref(mv));
                line.push(mv.clone());
            }
        }
        if line.is_empty() {
            line.push(chosen);
        }
        let running = self
            .solver
            .as_ref()
            .map_or(Duration::ZERO, |s| s.run.elapsed());
        let estimate = self.solve_estimate.max(running).max(self.move_time);
        // Lead: half again the estimate, in moves; at least one.
        let wanted = (estimate.as_secs_f64() * 1.5 / self.move_time.as_secs_f64().max(0.001)).ceil()
            as usize;
        let mut states = vec![self.state.clone()];
        for mv in line.iter().take(wanted.max(1)) {
            let s = states.last().expect("non-empty");
            if m.is_terminal(s) {
                break;
            }
            let next = m.next_state(s, std::slice::from_ref(mv));
            states.push(next);
        }
        let d = states.len() - 1;
        let end = states.pop().expect("the line's end");
        if m.is_terminal(&end) {
            // The line ends the game: nothing left to plan for.
            return line[0].clone();
        }
        info!(
            "match {}: step {}: committing to {d} move(s) of the search's line; solver restarts from step {} (estimate {:.1}s)",
            self.id,
            self.step + 1,
            self.step + d,
            estimate.as_secs_f64()
        );
        self.plan = Some(Plan {
            from: self.step + 1,
            states: states[1..].to_vec(),
            moves: line[1..d].to_vec(),
            goal: None,
        });
        self.start_solver_from(self.step + d, end);
        line[0].clone()
    }
}
