//! The reference engine: stratified bottom-up evaluation of the non-ground rules.
//!
//! Rules are compiled once into join plans (body literals ordered so that each
//! literal is as bound as possible, `not` and `distinct` as soon as their variables
//! are bound). Static relations are computed once when the prover is built. For a
//! state, the state-phase components run once and are cached; for a joint move,
//! only the move-phase components run on top. Components run in the order the
//! normal form gives (dependencies first), recursive ones to a fixpoint, so every
//! `not` sees a complete table.
//!
//! That is the bottom-up strategy. The goal-directed one ([`topdown`]) runs the
//! same compiled rules per call instead: a question such as `(legal white ?m)`
//! calls the relations it needs with the arguments it knows, and each call is
//! tabled per state. A game whose questions touch a small part of large
//! derived relations (amazons' queen paths, lists, attack maps) is answered
//! ten to a hundred times faster; a game whose questions need whole relations
//! (tic-tac-toe's lines) pays the calls' bookkeeping. [`Prover::try_new`]
//! picks per game by counting the work of both on a short walk.
//!
//! The prover is the oracle the faster engines are tested against: it favours
//! obvious correctness, and is fast enough to be used on games too large to ground.

mod calls;
mod compile;
mod eval;
mod table;
mod topdown;

use std::sync::Mutex;

use compile::{compile_rule, make_comp, CRule, Comp, Program, Relations};
use eval::{Db, MAX_STATIC_CELLS};
use topdown::{TopDown, MAX_CALL_DEPTH};

use super::terms::{TermId, TermPool};
use super::{RoleIdx, StateMachine};
use crate::gdl::{Game, Phase, Relation, Term};

pub(super) type RelId = usize;

/// A state: the fluents that hold, as sorted term ids.
pub type ProverState = Vec<TermId>;

/// Why a prover could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ProverError {
    #[error(
        "static relation {relation} grows past {cells} terms: the game is too large for the prover"
    )]
    TooLarge { relation: String, cells: usize },
    #[error("the rules of {0} are read top-down only: the prover evaluates this game goal-directed, not bottom-up")]
    TopDownOnly(String),
    #[error("computing static relation {relation} passed {work} units of work")]
    StaticWork { relation: String, work: u64 },
    #[error("cancelled while computing static relation {relation}")]
    Cancelled { relation: String },
    #[error("the rules, read top-down, do not finish {steps} steps of play within {work} units of work (or nest calls deeper than {MAX_CALL_DEPTH}): they have no finite reading")]
    Unfinished { work: u64, steps: usize },
}

/// How the prover evaluates a question.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Strategy {
    /// Every relation the question depends on, bottom-up, per state.
    BottomUp,
    /// Only the calls the question makes, tabled per state ([`topdown`]).
    GoalDirected,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::BottomUp => "bottom-up",
            Strategy::GoalDirected => "goal-directed",
        }
    }
}

/// The trial walk's steps and the goal-directed walk's work bound.
const TRIAL_STEPS: usize = 20;
const TRIAL_WORK: u64 = 40_000_000;
/// The steps that rules read top-down must finish within [`TRIAL_WORK`]
/// (Corridor's wall moves search the board for a path, a few million units
/// a state).
const TOP_DOWN_TRIAL_STEPS: usize = 3;

/// The reference engine. See the module documentation.
pub struct Prover {
    game: Game,
    program: Program,
    roles: Vec<TermId>,
    init: ProverState,
    db: Mutex<Db>,
}

impl Prover {
    /// Builds the prover, computing the static relations.
    ///
    /// # Panics
    /// When the static relations exceed the size guard; use [`Prover::try_new`]
    /// on games from untrusted sources.
    pub fn new(game: Game) -> Prover {
        match Prover::try_new(game) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    /// Builds the prover, or says which static relation grew past the size guard
    /// (some games define static relations with billions of facts).
    pub fn try_new(game: Game) -> Result<Prover, ProverError> {
        let prover = Prover::build(game, false, None)?;
        prover.choose_strategy();
        if !prover.game.top_down.is_empty() {
            // Rules read top-down may not end (nothing bounds them before
            // they run): a short walk must finish, or the game is refused.
            let walked = prover.bounded(TRIAL_WORK, |p| {
                super::walk::walk(p, TOP_DOWN_TRIAL_STEPS, None)
            });
            if walked.is_none() {
                return Err(ProverError::Unfinished {
                    work: TRIAL_WORK,
                    steps: TOP_DOWN_TRIAL_STEPS,
                });
            }
        }
        Ok(prover)
    }

    /// Builds the prover with the given strategy, no trial. A game with
    /// rules only a top-down evaluation reads ([`Game::top_down`]) has no
    /// bottom-up reading.
    pub fn try_with(game: Game, strategy: Strategy) -> Result<Prover, ProverError> {
        if strategy == Strategy::BottomUp && !game.top_down.is_empty() {
            let names: Vec<String> = game
                .top_down
                .iter()
                .map(|r| r.display(&game.symbols))
                .collect();
            return Err(ProverError::TopDownOnly(names.join(", ")));
        }
        let prover = Prover::build(game, false, None)?;
        prover.set_strategy(strategy);
        Ok(prover)
    }

    /// Builds the prover at once: goal-directed, its static relations
    /// computed on demand (only the rows a question needs, kept) instead of
    /// whole before the first question, and no trial. The engine that
    /// answers while the others prepare ([`super::anytime`]): some games'
    /// static relations are too large to compute whole, or slow to.
    pub fn try_lazy(game: Game) -> Result<Prover, ProverError> {
        let prover = Prover::build(game, true, None)?;
        prover.set_strategy(Strategy::GoalDirected);
        Ok(prover)
    }

    /// Builds the prover goal-directed, no trial, its static relations
    /// computed whole within `work` units of work ([`ProverError::StaticWork`]
    /// past them): the prover [`Prover::try_new`] builds, less its trial,
    /// for a caller that must have an engine soon and can fall back on
    /// [`Prover::try_lazy`]. Work, not time, so that the choice is the
    /// same on every machine; a caller with a deadline cancels it too
    /// ([`crate::cancel`], [`ProverError::Cancelled`]).
    pub fn try_eager_within(game: Game, work: u64) -> Result<Prover, ProverError> {
        let prover = Prover::build(game, false, Some(work))?;
        prover.set_strategy(Strategy::GoalDirected);
        Ok(prover)
    }

    /// The prover of `game`: static relations computed whole (within
    /// `static_work` units of work when given), or with `lazy` on demand.
    fn build(game: Game, lazy: bool, static_work: Option<u64>) -> Result<Prover, ProverError> {
        let rels = Relations::of(&game);
        let rel_of = |r: Relation| rels.id(r);
        let dynamic = rels.dynamic(&game);
        // Before static tables exist, guess their sizes; the rules that run per
        // state are compiled again below with the real sizes.
        let mut sizes: Vec<f64> = dynamic
            .iter()
            .map(|&d| if d { 30.0 } else { 100.0 })
            .collect();
        sizes[rels.does] = 1.0;
        for r in &game.small {
            if let Some(id) = rels.get(r) {
                sizes[id] = 1.0;
            }
        }
        let mut pool = TermPool::new();
        let rules: Vec<CRule> = game
            .rules
            .iter()
            .map(|r| compile_rule(r, &mut pool, &rel_of, &sizes, None))
            .collect();
        let mut db = Db::new(pool, &rels.arities);
        let mut program = Program::new(rules, &rels, &dynamic, &mut db.tables);
        // A game read top-down computes its static relations with rules on
        // demand (some have no finite extent); the facts are tables.
        // Rules read top-down are joined in the order written, as the
        // top-down prover they were written for joins them.
        let in_order = !game.top_down.is_empty();
        let lazy = lazy || in_order;
        let facts_only = |c: &&crate::gdl::normal::Component| {
            c.rules.iter().all(|&ri| {
                let r = &game.rules[ri];
                r.body.is_empty() && r.head.is_ground()
            })
        };
        let static_comps: Vec<Comp> = game
            .components
            .iter()
            .filter(|c| c.phase == Phase::Static)
            .filter(|c| !lazy || facts_only(c))
            .map(|c| make_comp(c, &game, &mut db.pool, &rel_of, &sizes, &mut db.tables))
            .collect();
        db.work.left = static_work;
        let computed = db.run_static(&program, &static_comps);
        let out_of_work = db.work.left == Some(0);
        db.work.left = None;
        if let Err(rel) = computed {
            let relation = rels.name(rel, &game.symbols);
            return Err(match static_work {
                _ if db.work.cancelled => ProverError::Cancelled { relation },
                Some(work) if out_of_work => ProverError::StaticWork { relation, work },
                _ => ProverError::TooLarge {
                    relation,
                    cells: MAX_STATIC_CELLS,
                },
            });
        }
        let init_rel = rels.init;
        let init_table = &db.tables[init_rel];
        let mut init: ProverState = (0..init_table.len())
            .map(|i| init_table.row(i)[0])
            .collect();

        // Recompile the per-state rules knowing the static tables' sizes; `true`
        // is estimated by the initial state.
        for (r, size) in sizes.iter_mut().enumerate() {
            if !dynamic[r] {
                *size = db.tables[r].len() as f64;
            }
        }
        sizes[program.true_rel] = init.len().max(1) as f64;
        program.compile_dynamic(&game, &mut db.pool, &mut db.tables, &rel_of, &sizes);
        db.loaded.done = vec![false; program.state_comps.len()];
        db.td = Some(Box::new(TopDown::new(&game, rels, sizes, (lazy, in_order))));
        if db.is_tabled_static(init_rel) {
            db.topdown = true;
            let c = db.call(init_rel, 0, &[]);
            let t = db.answers(Some(c), init_rel);
            init = (0..t.len()).map(|i| t.row(i)[0]).collect();
            db.topdown = false;
        }
        init.sort_unstable();
        init.dedup();

        let roles = game
            .roles
            .iter()
            .map(|r| db.pool.from_term(r).expect("roles are ground (validated)"))
            .collect();
        Ok(Prover {
            game,
            program,
            roles,
            init,
            db: Mutex::new(db),
        })
    }

    /// The strategy in use.
    pub fn strategy(&self) -> Strategy {
        if self.db.lock().unwrap_or_else(|e| e.into_inner()).topdown {
            Strategy::GoalDirected
        } else {
            Strategy::BottomUp
        }
    }

    /// Switches the strategy (the memo of the loaded state is dropped). A
    /// prover built with its static relations on demand
    /// ([`Prover::try_lazy`]) stays goal-directed.
    pub fn set_strategy(&self, strategy: Strategy) {
        let mut db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        // A game read top-down has no other strategy, and neither has a
        // prover whose static relations are computed on demand.
        db.topdown = strategy == Strategy::GoalDirected
            || !self.game.top_down.is_empty()
            || db.td.as_ref().is_some_and(|td| td.lazy);
        self.forget(&mut db);
    }

    /// Drops every row and call of the loaded state.
    fn forget(&self, db: &mut Db) {
        let h = db.hasher;
        for &rel in &self.program.dynamic_rels {
            let t = &mut db.tables[rel];
            let keep = t.static_len;
            t.truncate(&h, keep);
            t.state_len = keep;
        }
        db.loaded.forget();
        if let Some(td) = db.td.as_mut() {
            td.clear_state();
        }
    }

    /// Picks the strategy that does less work on a short fixed walk
    /// ([`super::walk::walk`]): join steps, derived tuples and calls, each
    /// weighted by what it costs beside a join step. Counted, not timed, so the choice is the
    /// same on every machine and every run. The goal-directed walk goes
    /// first; the bottom-up one may do at most as much work again, and
    /// loses when it runs out (a game whose relations explode bottom-up
    /// then costs the trial no more than the goal-directed walk).
    pub fn choose_strategy(&self) -> Strategy {
        if !self.game.top_down.is_empty() {
            self.set_strategy(Strategy::GoalDirected);
            return Strategy::GoalDirected;
        }
        let work = |db: &Db| db.work.done;
        let measure = |strategy: Strategy, budget: u64| -> Option<(u64, usize)> {
            self.set_strategy(strategy);
            let start = work(&self.db.lock().unwrap_or_else(|e| e.into_inner()));
            let steps = self.bounded(budget, |p| super::walk::walk(p, TRIAL_STEPS, None));
            let steps = steps?;
            let end = work(&self.db.lock().unwrap_or_else(|e| e.into_inner()));
            Some((end - start, steps))
        };
        let chosen = match measure(Strategy::GoalDirected, TRIAL_WORK) {
            // Neither finishes the walk within the bound: goal-directed,
            // which only ever does less on the games that need the bound.
            None => match measure(Strategy::BottomUp, TRIAL_WORK) {
                Some(_) => Strategy::BottomUp,
                None => Strategy::GoalDirected,
            },
            Some((td_work, steps)) => match measure(Strategy::BottomUp, td_work.max(1)) {
                Some((bu_work, bu_steps)) if bu_steps >= steps && bu_work <= td_work => {
                    Strategy::BottomUp
                }
                Some(_) if steps == 0 => Strategy::BottomUp,
                _ => Strategy::GoalDirected,
            },
        };
        self.set_strategy(chosen);
        chosen
    }

    /// Runs `f` on `state` with the state components `needs` computed (all
    /// of them when `None`).
    fn with_state<R>(
        &self,
        state: &ProverState,
        needs: Option<&[usize]>,
        f: impl FnOnce(&mut Db, &Program) -> R,
    ) -> R {
        let mut db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        db.load_state(&self.program, state);
        db.ensure(&self.program, needs);
        let r = f(&mut db, &self.program);
        if db.work.left.is_none() && db.overflow.take().is_some() {
            // Only goal-directed calls nested past their depth bound stop
            // evaluation outside [`Prover::bounded`]: the answer is
            // incomplete; forget it, so later questions start afresh.
            tracing::error!(
                "the rules nest calls deeper than {MAX_CALL_DEPTH} at a state: the answer is incomplete"
            );
            self.forget(&mut db);
            if let Some(td) = db.td.as_mut() {
                td.clear_all();
            }
        }
        r
    }

    /// Runs `f` with at most `join_steps` steps of rule evaluation; `None`
    /// when they run out. Then what `f` saw is incomplete (the rules stopped
    /// half way) and the rows computed so far are dropped, so the prover
    /// answers correctly afterwards. Why: a game's rules may take a state
    /// far longer than any clock allows (ruleDepthQuadratic as written asks
    /// for 2^44 tuples), and a caller choosing an engine must find out
    /// without hanging. Meant for a prover no other thread uses yet: calls
    /// from other threads meanwhile would share the budget.
    pub fn bounded<R>(&self, join_steps: u64, f: impl FnOnce(&Self) -> R) -> Option<R> {
        self.db.lock().unwrap_or_else(|e| e.into_inner()).work.left = Some(join_steps);
        let r = f(self);
        let mut db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        db.work.left = None;
        if db.overflow.take().is_none() {
            return Some(r);
        }
        self.forget(&mut db);
        if let Some(td) = db.td.as_mut() {
            // Calls cut short may be incomplete, the static ones too.
            td.clear_all();
        }
        None
    }

    /// The prover's id of ground term `t` (interned when new); `None` for a
    /// term with variables.
    pub fn intern(&self, t: &Term) -> Option<TermId> {
        self.db
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pool
            .from_term(t)
    }

    /// The number of distinct ground terms seen so far (for diagnostics).
    pub fn terms_seen(&self) -> usize {
        self.db.lock().unwrap_or_else(|e| e.into_inner()).pool.len()
    }
}

impl StateMachine for Prover {
    type State = ProverState;
    type Move = TermId;

    fn game(&self) -> &Game {
        &self.game
    }

    fn initial_state(&self) -> ProverState {
        self.init.clone()
    }

    fn legal_moves(&self, state: &ProverState, role: RoleIdx, out: &mut Vec<TermId>) {
        out.clear();
        let r = self.roles[role];
        self.with_state(state, Some(&self.program.needs_legal), |db, prog| {
            let t = {
                let c = db.ask(prog.legal_rel, 1, &[r]);
                db.answers(c, prog.legal_rel)
            };
            for i in 0..t.len() {
                let row = t.row(i);
                if row[0] == r {
                    out.push(row[1]);
                }
            }
        });
    }

    fn is_legal(&self, state: &ProverState, role: RoleIdx, m: &TermId) -> bool {
        let r = self.roles[role];
        self.with_state(state, Some(&self.program.needs_legal), |db, prog| {
            // Goal-directed, one call with both arguments bound (it stops at
            // its first answer); bottom-up, the table.
            let c = db.ask(prog.legal_rel, 0b11, &[r, *m]);
            let t = db.answers(c, prog.legal_rel);
            (0..t.len()).any(|i| t.row(i) == [r, *m])
        })
    }

    fn next_state(&self, state: &ProverState, joint: &[TermId]) -> ProverState {
        self.with_state(state, None, |db, prog| {
            db.load_move(prog, &self.roles, joint);
            let t = {
                let c = db.ask(prog.next_rel, 0, &[]);
                db.answers(c, prog.next_rel)
            };
            let mut next: ProverState = (0..t.len()).map(|i| t.row(i)[0]).collect();
            next.sort_unstable();
            next.dedup();
            next
        })
    }

    fn is_terminal(&self, state: &ProverState) -> bool {
        self.with_state(state, Some(&self.program.needs_terminal), |db, prog| {
            let c = db.ask(prog.terminal_rel, 0, &[]);
            db.answers(c, prog.terminal_rel).len() > 0
        })
    }

    fn goal_values(&self, state: &ProverState, role: RoleIdx) -> Vec<u8> {
        let r = self.roles[role];
        self.with_state(state, Some(&self.program.needs_goal), |db, prog| {
            let c = db.ask(prog.goal_rel, 1, &[r]);
            let t = db.answers(c, prog.goal_rel);
            let mut vals: Vec<u8> = (0..t.len())
                .map(|i| t.row(i))
                .filter(|row| row[0] == r)
                .filter_map(|row| {
                    db.pool
                        .is_const(row[1])
                        .then(|| {
                            self.game
                                .symbols
                                .name(db.pool.functor(row[1]))
                                .parse::<u8>()
                                .ok()
                        })
                        .flatten()
                })
                .filter(|&v| v <= 100)
                .collect();
            vals.sort_unstable();
            vals.dedup();
            vals
        })
    }

    fn fluents(&self, state: &ProverState) -> Vec<Term> {
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        state.iter().map(|&f| db.pool.to_term(f)).collect()
    }

    fn state_from_fluents(&self, fluents: &[Term]) -> Option<ProverState> {
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        let mut state = fluents
            .iter()
            .map(|t| db.pool.find_term(t))
            .collect::<Option<ProverState>>()?;
        state.sort_unstable();
        state.dedup();
        Some(state)
    }

    fn includes(&self, state: &ProverState, part: &ProverState) -> bool {
        // Both sorted: one merge.
        let mut it = state.iter();
        part.iter().all(|p| it.any(|s| s == p))
    }

    fn move_term(&self, m: &TermId) -> Term {
        self.db
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pool
            .to_term(*m)
    }

    fn parse_move(&self, term: &Term) -> Option<TermId> {
        // Interned, not only looked up: a move the rules derive only in states not
        // yet visited (a replay's later moves, an opponent's move) has no id yet.
        self.db
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pool
            .from_term(term)
    }
}
