//! Breadth-first search over the rule engine: the forward proof of
//! optimality beside clingo's.
//!
//! The incremental worker proves "no plan of k moves" one k at a time, each a
//! SAT call over a program as large as k steps. A search over the states
//! proves the same by visiting every state within k moves once: duplicate
//! detection folds the many orders of the same moves (the 8-puzzle's 181,440
//! boards against its 10^13 move sequences of length 30), and when a layer is
//! complete without a win, no plan of that many moves exists. The first win
//! found is a shortest plan; each completed layer raises the lower bound the
//! coordinator reads ([`super::super::solve::ClingoWorker::refuted`], shared with
//! the clingo workers).
//!
//! States are compared exactly (the engine's own state: a bitset on the
//! propnet), but a game's clock (`(step ?n)`, read by nothing but its own
//! `next` rule and the `terminal` rule that ends the game at its last value)
//! would make every state unique to its depth, so the search runs the game
//! without it ([`without_clock`]) and counts the depth itself, to the
//! clock's end. Without the clock a board is kept at its first (smallest)
//! depth only, which is exact for plans that end the game before the clock
//! does; a plan that ends by the clock running out may need a later visit of
//! a board, so with the clock left out nothing is claimed about plans of the
//! clock's full length unless one was found.
//!
//! Memory bounds it: it gives up past a number of states (from
//! `--memory-mb`, else [`MAX_STATES`]), keeping the lower bound it proved.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use hashbrown::HashTable;

use crate::gdl::{kw, Game, Literal, Rule, Sym, Term};
use crate::reasoner::ground::GroundProgram;
use crate::reasoner::{ground, AnyMachine, MachineVisitor, StateMachine};

use super::super::context::{HeadStart, OpenOnDrop, HEAD_START_STATES};
use super::super::solve::{Event, FoundPlan, Times, Verdict};
use super::super::{Proven, SolveContext, WorkerKind};
use super::ceiling::Prune;

/// The most states kept when no memory limit is given (about 100 bytes each
/// on the propnet: under a gigabyte).
pub const MAX_STATES: usize = 8_000_000;

/// Bytes a kept state is reckoned to take, to turn `--memory-mb` into a
/// number of states: the state, its parent and move, and the table's slot.
const BYTES_PER_STATE: usize = 120;

/// What the search may use.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The longest plan looked for.
    pub max_steps: usize,
    /// The most states kept.
    pub max_states: usize,
    /// When the search may step back to a lower priority (see
    /// [`crate::priority`]): in auto, after its cheap first chance, once a
    /// clingo worker has proven more than it has.
    pub step_back_after: Option<Duration>,
    /// Whether the search may take the lead (see
    /// [`SolveContext::lead`]): in auto, where other workers run beside it.
    pub may_lead: bool,
    /// The threads an IDA* pass is shared by (see [`super::ida`]).
    pub threads: usize,
}

impl Limits {
    /// The limits of a solve with `--max-steps` and `--memory-mb`: a quarter
    /// of the memory limit, the rest being the clingo workers'.
    pub fn new(max_steps: usize, memory_mb: Option<u64>) -> Limits {
        let max_states = memory_mb.map_or(MAX_STATES, |mb| {
            (mb as usize * (1 << 20) / 4 / BYTES_PER_STATE).max(1000)
        });
        Limits {
            max_steps,
            max_states,
            step_back_after: None,
            may_lead: false,
            threads: 1,
        }
    }
}

/// Runs the search on the solve's rules and reports like a clingo worker: a
/// winning plan proven shortest, a proven best goal or no plan when every
/// state was seen, `Failed` when it gives up (state limit, `--max-steps`)
/// with its lower bound left in the context's `refuted`. `ground` is the
/// game's ground program.
pub fn run(
    context: &SolveContext,
    ground: Option<Arc<GroundProgram>>,
    limits: Limits,
    tx: mpsc::Sender<Event>,
) {
    let start = Instant::now();
    let mut gate = OpenOnDrop::new(&context.head_start);
    let times = || Times {
        ground_s: 0.0,
        solve_s: start.elapsed().as_secs_f64(),
    };
    let (game, clock_end, ground, machine) = match without_clock(&context.game) {
        // Other rules than the solve's: ground once, the engine compiled
        // from that grounding.
        Some((game, end)) => {
            let ground = ground::ground(&game, &crate::reasoner::prepare::default_limits()).ok();
            let machine = AnyMachine::build_on_ground(game.clone(), context.engine, ground.clone())
                .map_err(|e| e.to_string());
            (game, Some(end), ground.map(Arc::new), machine)
        }
        None => {
            let machine = own_engine(context, ground.as_deref());
            (context.game.clone(), None, ground, machine)
        }
    };
    let machine = match machine {
        Ok((m, why)) => {
            let clock = clock_end.map_or(String::new(), |e| {
                format!(", without the clock (it ends the game after {e} moves)")
            });
            crate::progress!("[breadth] engine: {why}{clock}");
            m
        }
        Err(e) => {
            let _ = tx.send(Event::Failed(WorkerKind::Breadth, e, times()));
            return;
        }
    };
    if let Some(g) = &ground {
        raise_bounds(&game, g, &machine, limits.max_steps, clock_end, context);
    }
    let end = machine.visit(Search {
        limits,
        clock_end,
        stop: &context.stop,
        refuted: &context.refuted,
        lead: &context.lead,
        head_start: &context.head_start,
        start,
        rules: ground.clone().map(|g| (game.clone(), g)),
    });
    let event = match end {
        End::Won(plan) => Event::Done(
            WorkerKind::Breadth,
            Verdict::Plan(FoundPlan {
                plan,
                goal: 100,
                proven: Proven::Shortest,
            }),
            times(),
        ),
        End::Exhausted {
            best: Some((goal, plan)),
            depth: _,
        } => Event::Done(
            WorkerKind::Breadth,
            Verdict::Plan(FoundPlan {
                plan,
                goal,
                proven: Proven::BestGoal,
            }),
            times(),
        ),
        End::Exhausted { best: None, depth } => Event::Done(
            WorkerKind::Breadth,
            Verdict::NoPlan {
                horizon: depth,
                message: "no plan reaches a goal above 0 (every reachable state searched)"
                    .to_string(),
            },
            times(),
        ),
        End::GaveUp(why) => Event::Failed(WorkerKind::Breadth, why, times()),
        End::Stopped => Event::Done(WorkerKind::Breadth, Verdict::Stopped, times()),
    };
    if matches!(
        event,
        Event::Done(_, Verdict::Plan(_) | Verdict::NoPlan { .. }, _)
    ) {
        gate.answered();
    }
    let _ = tx.send(event);
}

/// The engine of the search on the solve's own rules: the searches' shared
/// engine when it is a propnet (immutable, read by any number of threads);
/// one of its own when it is a prover or a hybrid, which evaluate behind one
/// lock (two searches on it would take turns). When no engine builds, the
/// shared build's error: another build of the same rules would fail alike.
fn own_engine(
    context: &SolveContext,
    ground: Option<&GroundProgram>,
) -> Result<(AnyMachine, String), String> {
    match context.machine(ground)? {
        shared @ (AnyMachine::Propnet(_), _) => Ok(shared),
        _ => AnyMachine::build_on_ground(context.game.clone(), context.engine, ground.cloned())
            .map_err(|e| e.to_string()),
    }
}

/// Raises the context's `refuted` to what the bounds prove from the ground
/// rules `g` before the search starts (the counting bound and relaxed
/// reachability), and sets its goal ceiling where the plays' length is
/// bounded (by the latches, by a clock) and no goal of 100 is within reach.
fn raise_bounds(
    game: &Game,
    g: &GroundProgram,
    machine: &AnyMachine,
    max_steps: usize,
    clock_end: Option<usize>,
    context: &SolveContext,
) {
    let refuted = &context.refuted;
    let init = machine.visit(InitialFluents);
    let length = crate::reasoner::ground::play_bound(g, &init);
    if let Some(b) = &length {
        crate::progress!(
            "[bound] no play lasts beyond {} moves: each move makes one of {} latches true \
             that was false ({} hold at the start)",
            b.moves,
            b.latches,
            b.at_start
        );
    }
    let within = match (length.map(|b| b.moves), clock_end) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(within) = within {
        let ceiling = super::relaxed::goal_ceiling(game, g, &init, within);
        if ceiling < 100 {
            crate::progress!(
                "[bound] no play reaches a goal above {ceiling}: none within {within} moves, \
                 even with `not` left out"
            );
            context.goal_ceiling.store(ceiling, Ordering::Relaxed);
        }
    }
    if let Some(b) = super::count::bound(game, g, &init, clock_end) {
        crate::progress!("[bound] no plan of fewer than {} moves: {}", b.moves, b.why);
        refuted.fetch_max(b.moves - 1, Ordering::Relaxed);
    }
    if let Some(moves) = super::relaxed::bound(game, g, &init, max_steps, clock_end) {
        crate::progress!(
            "[bound] no plan of fewer than {moves} moves: goal 100 is out of reach \
             before, even with `not` left out"
        );
        refuted.fetch_max(moves - 1, Ordering::Relaxed);
    }
}

/// `game` without its clock, and the number of moves after which the clock
/// ends the game, when the game has a clock that nothing else reads: a
/// fluent that moves one step along a static successor relation every move
/// ([`super::super::bounds::clock_fluent`]), read only by its own `next` rules and
/// by `terminal` rules whose one literal is the clock's last value.
pub fn without_clock(game: &Game) -> Option<(Game, usize)> {
    let clock = super::super::bounds::clock_fluent(game)?;
    let end = super::super::bounds::game_length(game)?;
    let reads_clock = |l: &Literal| match l {
        Literal::Pos(t) | Literal::Not(t) => is_true_of(t, clock),
        _ => false,
    };
    let mut rules = Vec::with_capacity(game.rules.len());
    for r in &game.rules {
        let own =
            head_fluent(r, kw::NEXT) == Some(clock) || head_fluent(r, kw::INIT) == Some(clock);
        let ends = r.head.name() == Some(kw::TERMINAL)
            && r.body.len() == 1
            && r.body.iter().all(reads_clock);
        if own || ends {
            continue;
        }
        if r.body.iter().any(reads_clock) {
            return None;
        }
        rules.push(r.clone());
    }
    let desc = crate::gdl::Description {
        symbols: game.symbols.clone(),
        rules,
        source: game.source.clone(),
    };
    Some((Game::new(desc).ok()?, end))
}

/// The fluent's name in a rule with head `(kwd (f ...))`.
fn head_fluent(r: &Rule, kwd: Sym) -> Option<Sym> {
    match &r.head {
        Term::Func(k, args) if *k == kwd && args.len() == 1 => args[0].name(),
        _ => None,
    }
}

/// Whether `t` is `(true (fluent ...))`.
fn is_true_of(t: &Term, fluent: Sym) -> bool {
    matches!(t, Term::Func(k, args) if *k == kw::TRUE && args.len() == 1 && args[0].name() == Some(fluent))
}

/// The fluents of the initial state.
struct InitialFluents;

impl MachineVisitor for InitialFluents {
    type Output = Vec<Term>;

    fn visit<M: StateMachine + 'static>(self, machine: Arc<M>) -> Vec<Term> {
        machine.fluents(&machine.initial_state())
    }
}

/// How the search ended.
pub(super) enum End {
    Won(Vec<Term>),
    /// Every reachable state seen: the best goal of a terminal state, with a
    /// shortest plan to it; `depth` the deepest layer.
    Exhausted {
        best: Option<(u8, Vec<Term>)>,
        depth: usize,
    },
    GaveUp(String),
    Stopped,
}

pub(super) struct Search<'a> {
    pub(super) limits: Limits,
    /// Moves after which the left-out clock would end the game.
    pub(super) clock_end: Option<usize>,
    pub(super) stop: &'a AtomicBool,
    pub(super) refuted: &'a AtomicUsize,
    /// Set when this search leads ([`SolveContext::lead`]).
    pub(super) lead: &'a AtomicBool,
    /// Opened after [`HEAD_START_STATES`] states.
    pub(super) head_start: &'a HeadStart,
    pub(super) start: Instant,
    /// The rules searched and their ground program, for the pattern
    /// databases (see [`HEURISTIC_AFTER`]).
    pub(super) rules: Option<(Game, Arc<GroundProgram>)>,
}

/// The states the blind search keeps before it starts building pattern
/// databases beside it (on a thread of their own) and, once they are built
/// and bound the plan's length above half of what it has proven, goes on as
/// A* (see [`super::astar`]): a game the blind search proves at once is not
/// delayed by them.
pub(super) const HEURISTIC_AFTER: usize = 200_000;

/// The pattern databases being built beside the blind search (see
/// [`HEURISTIC_AFTER`]).
pub(super) struct Build {
    /// The thread: its error where it built no tier.
    pub(super) handle: std::thread::JoinHandle<Result<(), String>>,
    /// Each tier of databases as it is built (see [`super::pattern::TIERS`]).
    pub(super) tiers: std::sync::mpsc::Receiver<super::pattern::Heuristic>,
    /// Set when the search no longer wants them.
    pub(super) stop: Arc<AtomicBool>,
    pub(super) started: Instant,
}

/// A state seen: its parent's index, the move from there, the moves from
/// the initial state (`g`) and, for A*, the heuristic's estimate (`h`).
pub(super) struct Node<S, M> {
    pub(super) state: S,
    pub(super) parent: u32,
    pub(super) mv: Option<M>,
    pub(super) g: u32,
    pub(super) h: u32,
}

impl MachineVisitor for Search<'_> {
    type Output = End;

    fn visit<M: StateMachine + 'static>(self, machine: Arc<M>) -> End {
        let prune_rules = self.rules.clone();
        Bfs {
            m: &*machine,
            machine: machine.clone(),
            build: None,
            prune_rules,
            prune: None,
            s: self,
            nodes: Vec::new(),
            table: HashTable::new(),
            hasher: hashbrown::DefaultHashBuilder::default(),
            best: None,
        }
        .run()
    }
}

pub(super) struct Bfs<'a, M: StateMachine> {
    pub(super) m: &'a M,
    /// The same engine, for the thread that builds the pattern databases.
    pub(super) machine: Arc<M>,
    pub(super) build: Option<Build>,
    /// The rules the branch and bound is built from once a play ends below
    /// 100 (see [`super::ceiling`]), and the bound when built.
    prune_rules: Option<(Game, Arc<GroundProgram>)>,
    prune: Option<Prune>,
    pub(super) s: Search<'a>,
    pub(super) nodes: Vec<Node<M::State, M::Move>>,
    /// Indices into `nodes`, hashed by state.
    pub(super) table: HashTable<u32>,
    pub(super) hasher: hashbrown::DefaultHashBuilder,
    /// The best goal below 100 of a terminal state seen, at its first node.
    pub(super) best: Option<(u8, u32)>,
}

/// What adding a state found.
enum Added {
    Seen,
    New,
    Won(u32),
}

impl<M: StateMachine + 'static> Bfs<'_, M> {
    fn run(mut self) -> End {
        let end = self.blind();
        self.cancel_build();
        end
    }

    fn blind(&mut self) -> End {
        let init = self.m.initial_state();
        self.nodes.push(Node {
            state: init.clone(),
            parent: u32::MAX,
            mv: None,
            g: 0,
            h: 0,
        });
        let h = self.hash(&init);
        self.table.insert_unique(h, 0, |_| h);
        if self.m.is_terminal(&init) {
            let goal = self.goal(&init);
            return match goal {
                100 => End::Won(Vec::new()),
                0 => End::Exhausted {
                    best: None,
                    depth: 0,
                },
                g => End::Exhausted {
                    best: Some((g, Vec::new())),
                    depth: 0,
                },
            };
        }
        let mut layer: Vec<u32> = vec![0];
        let mut next: Vec<u32> = Vec::new();
        let mut legal = Vec::new();
        let mut depth = 0;
        let last = self
            .s
            .clock_end
            .map_or(self.s.limits.max_steps, |e| e.min(self.s.limits.max_steps));
        while !layer.is_empty() {
            if depth >= last {
                // Plans longer than `--max-steps`, or past the clock's end.
                return End::GaveUp(format!(
                    "no winning plan within {depth} moves (every state within them searched)"
                ));
            }
            if self.nodes.len() >= HEURISTIC_AFTER.min(self.s.limits.max_states / 2) {
                self.start_heuristic();
            }
            if let Some(end) = self.poll_heuristic(depth) {
                return end;
            }
            depth += 1;
            let at_clock_end = self.s.clock_end == Some(depth);
            for (k, &i) in layer.iter().enumerate() {
                if k % 1024 == 0 {
                    if self.s.stop.load(Ordering::Relaxed) {
                        return End::Stopped;
                    }
                    if self.nodes.len() >= HEAD_START_STATES {
                        self.s.head_start.open();
                    }
                    self.step_back_when_behind(depth);
                    if let Some(end) = self.poll_heuristic(depth - 1) {
                        return end;
                    }
                }
                if self.nodes.len() >= self.s.limits.max_states {
                    // Out of memory: the databases being built may still
                    // finish the job.
                    if let Some(end) = self.await_heuristic(depth - 1) {
                        return end;
                    }
                    return self.give_up(depth);
                }
                let state = self.nodes[i as usize].state.clone();
                if self.cut(&state) {
                    continue;
                }
                self.m.legal_moves(&state, 0, &mut legal);
                for mv in legal.drain(..) {
                    let child = self.m.next_state(&state, std::slice::from_ref(&mv));
                    match self.add(child, i, mv, depth, at_clock_end) {
                        Added::Seen => {}
                        Added::New => next.push(self.nodes.len() as u32 - 1),
                        Added::Won(n) => return End::Won(self.plan(n)),
                    }
                }
            }
            // No plan of `depth` moves: a win would have been found in this
            // layer, the first one each state reachable in that many moves
            // is in. At the clock's end, a board first reached earlier may
            // be reached again: nothing is claimed there.
            if !at_clock_end {
                self.s.refuted.fetch_max(depth, Ordering::Relaxed);
            }
            crate::progress!(
                "[breadth] no plan of {depth} moves: {} states, {:.2} s",
                self.nodes.len(),
                self.s.start.elapsed().as_secs_f64()
            );
            std::mem::swap(&mut layer, &mut next);
            next.clear();
        }
        if self.s.clock_end.is_some() {
            // Without the clock, a board could also end a plan when the
            // clock runs out after a longer way there.
            return End::GaveUp(format!(
                "no winning plan before the clock ends the game after {} moves",
                self.s.clock_end.unwrap_or(0)
            ));
        }
        if let Some(p) = &self.prune {
            crate::progress!(
                "[breadth] every state searched: {} of {} left unexpanded, no play from them \
                 scoring above the best goal",
                p.total_pruned,
                self.nodes.len()
            );
        }
        let best = self.best.map(|(g, n)| (g, self.plan(n)));
        End::Exhausted { best, depth }
    }

    /// Whether `state` need not be expanded: a play has ended with a goal
    /// below 100, and relaxed reachability finds no higher goal from
    /// `state` (branch and bound, see [`super::ceiling`]). Such a state
    /// cannot lead to goal 100 either, so the layers' proofs stand.
    fn cut(&mut self, state: &M::State) -> bool {
        let Some((best, _)) = self.best else {
            return false;
        };
        if let Some((game, g)) = self.prune_rules.take() {
            self.prune = Prune::new(&game, &g);
        }
        self.prune
            .as_mut()
            .is_some_and(|p| p.cuts(self.m, state, best))
    }

    /// Steps back to a lower priority, at most once, when the search has had
    /// its cheap chance ([`Limits::step_back_after`]) and another worker is
    /// ahead: it has proven that no plan of `depth` moves, the layer this
    /// search is still expanding, exists.
    pub(super) fn step_back_when_behind(&mut self, depth: usize) {
        if let Some(after) = self.s.limits.step_back_after {
            if self.s.start.elapsed() >= after && self.s.refuted.load(Ordering::Relaxed) >= depth {
                crate::priority::step_back(crate::priority::BEHIND);
                self.s.limits.step_back_after = None;
            }
        }
    }

    /// The state's goal (see [`super::best_goal`]): a plan wins when goal
    /// 100 holds at its end.
    pub(super) fn goal(&self, s: &M::State) -> u8 {
        super::best_goal(self.m, s)
    }

    pub(super) fn hash(&self, s: &M::State) -> u64 {
        use std::hash::BuildHasher;
        self.hasher.hash_one(s)
    }

    /// Adds `state`, reached from node `parent` by `mv`, unless seen; a
    /// state at the clock's end is terminal.
    fn add(
        &mut self,
        state: M::State,
        parent: u32,
        mv: M::Move,
        depth: usize,
        at_clock_end: bool,
    ) -> Added {
        let h = self.hash(&state);
        let nodes = &self.nodes;
        if self
            .table
            .find(h, |&i| nodes[i as usize].state == state)
            .is_some()
        {
            return Added::Seen;
        }
        let terminal = at_clock_end || self.m.is_terminal(&state);
        let goal = if terminal { self.goal(&state) } else { 0 };
        let n = self.nodes.len() as u32;
        self.nodes.push(Node {
            state,
            parent,
            mv: Some(mv),
            g: depth as u32,
            h: 0,
        });
        let nodes = &self.nodes;
        let hasher = &self.hasher;
        self.table.insert_unique(h, n, |&i| {
            use std::hash::BuildHasher;
            hasher.hash_one(&nodes[i as usize].state)
        });
        if !terminal {
            return Added::New;
        }
        match goal {
            100 => Added::Won(n),
            g if g > 0 && self.best.is_none_or(|(b, _)| g > b) => {
                self.best = Some((g, n));
                Added::Seen
            }
            _ => Added::Seen,
        }
    }

    /// The moves from the initial state to node `n`.
    pub(super) fn plan(&self, mut n: u32) -> Vec<Term> {
        let mut plan = Vec::new();
        while let Some(mv) = &self.nodes[n as usize].mv {
            plan.push(self.m.move_term(mv));
            n = self.nodes[n as usize].parent;
        }
        plan.reverse();
        plan
    }

    pub(super) fn give_up(&self, depth: usize) -> End {
        End::GaveUp(format!(
            "breadth-first search gave up at depth {depth} after {} states (its memory share)",
            self.nodes.len()
        ))
    }
}
