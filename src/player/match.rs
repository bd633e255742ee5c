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

use crate::gdl::print::{rule_to_string, term_to_string};
use crate::gdl::{self, kw, Game, Term};
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, RoleIdx, StateMachine};
use crate::search::{Mcts, SearchConfig};

use super::protocol::{Sexp, Start};
use super::solver::{SolverConfig, SolverRun};

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
        moves: Option<Vec<Sexp>>,
        deadline: Instant,
        reply: Reply,
    },
    Stop {
        moves: Option<Vec<Sexp>>,
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
        moves: Option<Vec<Sexp>>,
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
    pub async fn stop(&self, moves: Option<Vec<Sexp>>, within: Duration) -> Result<String, String> {
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
            solver: None,
            solver_gave_up: false,
            plan: None,
            off_plan_logged: None,
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

/// A verified plan from some step on: `states[i]` is the state the plan expects
/// before its move `moves[i]`, at match step `from + i`.
struct Plan<M: StateMachine> {
    from: usize,
    states: Vec<M::State>,
    moves: Vec<M::Move>,
    goal: u8,
}

/// A solver run and the step whose state it solves from.
struct Solving {
    run: SolverRun,
    from: usize,
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
    solver: Option<Solving>,
    /// The solver said there is no plan (or failed): do not start it again.
    solver_gave_up: bool,
    plan: Option<Plan<M>>,
    off_plan_logged: Option<usize>,
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
    fn apply(&mut self, moves: &[Sexp]) -> Result<(), String> {
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

    fn play(&mut self, moves: Option<Vec<Sexp>>, deadline: Instant) -> Result<String, String> {
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
            if let Some(m) = self.plan_move() {
                break (m, "plan");
            }
            if legal.len() == 1 {
                break (legal[0].clone(), "only legal move");
            }
            let now = Instant::now();
            if now >= think_until || self.cancelled.load(Ordering::Relaxed) {
                match self
                    .search
                    .try_best_move(self.role)
                    .filter(|m| legal.contains(m))
                {
                    Some(m) => break (m, "search"),
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

    fn stop(&mut self, moves: Option<Vec<Sexp>>) -> Result<String, String> {
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

    /// The rules with the `init` facts replaced by the current state, so the solver
    /// can plan from here.
    fn rules_from_here(&self) -> String {
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
        for f in self.machine.fluents(&self.state) {
            let _ = writeln!(out, "({init} {})", term_to_string(&f, &g.symbols));
        }
        out
    }

    /// Starts the solver from the current state (one-player games only).
    fn start_solver(&mut self) {
        let Some(cfg) = &self.cfg.solver else { return };
        if self.machine.num_roles() != 1
            || self.solver_gave_up
            || self.machine.is_terminal(&self.state)
        {
            return;
        }
        let rules = self.rules_from_here();
        let label = format!("match {} step {}", self.id, self.step);
        match SolverRun::start(&rules, cfg, &label) {
            Ok(run) => {
                info!(
                    "match {}: solver started from step {} (pid {}, timeout {:.0}s, {} MB)",
                    self.id,
                    self.step,
                    run.pid(),
                    cfg.timeout.as_secs_f64(),
                    cfg.memory_mb
                );
                self.solver = Some(Solving {
                    run,
                    from: self.step,
                });
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
        let (from, secs) = (s.from, s.run.elapsed().as_secs_f64());
        self.solver = None;
        let out = match result {
            Ok(o) => o,
            Err(e) => {
                warn!("match {}: solver failed after {secs:.2}s: {e}", self.id);
                self.solver_gave_up = true;
                return;
            }
        };
        if out.status != "solved" || out.plan.is_empty() {
            info!(
                "match {}: solver from step {from}: {} after {secs:.2}s{}; search plays on",
                self.id,
                out.status,
                out.message
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            );
            self.solver_gave_up = true;
            return;
        }
        if from != self.step {
            info!(
                "match {}: the solver's plan from step {from} came after {secs:.2}s, at step {}; solver restarts from here",
                self.id, self.step
            );
            self.start_solver();
            return;
        }
        match self.verify_plan(&out.plan) {
            Ok(plan) => {
                info!(
                    "match {}: solver from step {from}: plan of {} moves to goal {} ({} proven) in {secs:.2}s, verified",
                    self.id,
                    plan.moves.len(),
                    plan.goal,
                    out.proven.as_deref().unwrap_or("none")
                );
                self.plan = Some(plan);
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

    /// Replays a plan from the current state on our engine: every move legal, the
    /// end terminal with a goal.
    fn verify_plan(&self, plan: &[String]) -> Result<Plan<M>, String> {
        let m = &*self.machine;
        let g = m.game();
        let mut state = self.state.clone();
        let mut states = Vec::with_capacity(plan.len());
        let mut moves = Vec::with_capacity(plan.len());
        for (i, text) in plan.iter().enumerate() {
            if m.is_terminal(&state) {
                return Err(format!("the game ends before move {}", i + 1));
            }
            let term = Sexp::parse_one(text, "a plan move")
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
            from: self.step,
            states,
            moves,
            goal,
        })
    }

    /// The plan's move when the current state is the one the plan expects here.
    fn plan_move(&mut self) -> Option<M::Move> {
        let plan = self.plan.as_ref()?;
        let i = self.step.checked_sub(plan.from)?;
        if plan.states.get(i) == Some(&self.state) {
            return Some(plan.moves[i].clone());
        }
        if self.off_plan_logged != Some(self.step) {
            self.off_plan_logged = Some(self.step);
            warn!(
                "match {}: step {}: the state is not the one the plan expects; search decides, solver restarts from here",
                self.id, self.step
            );
            self.plan = None;
            if self.solver.is_none() {
                self.start_solver();
            }
        }
        None
    }
}
