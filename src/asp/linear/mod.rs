//! Linear state invariants, over the integers and modulo 2, and the goal
//! ceiling they prove.
//!
//! Where every move changes the state by a fixed pattern, sums over the
//! state's fluents never change: on a peg board each jump takes two pegs and
//! puts one down, so "pegs on the board minus the counter" stays 0, and the
//! three pegs of a jump lie on three different diagonals, so the parity of
//! the pegs on two diagonal classes stays what it was at the start (the
//! position classes of peg solitaire, de Bruijn 1972). Such a sum is an
//! *invariant* `sum w_f [f] = v` (or `= v mod 2`); the relaxed reachability
//! of [`super::forward::relaxed`] cannot see it, since it forgets what a move
//! takes away.
//!
//! The invariants are found the way planners find them (Rintanen's and
//! Helmert's invariant synthesis), here as linear algebra: the changes of
//! sampled transitions (random plays on the rule engine) span a space, and
//! every vector orthogonal to all of them, over the rationals or over GF(2),
//! is a candidate. A candidate set is proven by induction with clingo, on
//! the one-step program of [`super::invariants`]: from any state satisfying
//! every candidate, no legal move may break one. A transition that breaks
//! some is a change no sample showed; it joins the samples and the
//! candidates are computed again, until none breaks (or the budget ends,
//! and nothing is proven). Then clingo is asked, from the highest goal
//! value down, for a terminal state that satisfies the invariants and gives
//! the first role that goal: the first value with one is the *goal
//! ceiling*, which no play exceeds. On pegEuro (the French board from the
//! centre) no state of one peg satisfies them: its best, two pegs, is proven
//! as soon as a play reaches it.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clingo::{Control, ShowType, SolveMode, Symbol, SymbolType};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::control::err;
use super::invariants::{ground, relaxed_fluents, rules_text};
use super::translate::translate;

mod space;
use crate::gdl::{Game, Term};
use crate::reasoner::{MachineVisitor, StateMachine};
use space::Space;

/// Games with more fluents than this are not analysed: the dense rows of the
/// elimination cost `n^2` words, and such games have other bounds.
pub const MAX_FLUENTS: usize = 1500;
/// The most rounds of proof (each adds the changes of the transitions that
/// broke candidates).
const MAX_ROUNDS: usize = 40;
/// The most transitions one round takes from clingo.
const MODELS_PER_ROUND: usize = 16;
/// Conflicts per solve call between budget checks.
const CONFLICTS_PER_CALL: u32 = 2000;

/// `sum w_f [f] = value` over every reachable state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Equation {
    /// Fluent numbers (into [`Linear::fluents`]) and their nonzero weights.
    pub terms: Vec<(usize, i64)>,
    pub value: i64,
}

/// `sum [f] = odd mod 2` over every reachable state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parity {
    pub fluents: Vec<usize>,
    pub odd: bool,
}

/// Invariants over the fluents of the relaxed game.
#[derive(Clone, Debug, Default)]
pub struct Linear {
    /// The fluents, as clingo symbols.
    pub fluents: Vec<Symbol>,
    pub equations: Vec<Equation>,
    pub parities: Vec<Parity>,
}

impl Linear {
    /// Whether a state (its fluents' numbers) satisfies every invariant.
    pub fn holds_in(&self, state: &[usize]) -> bool {
        let set: HashSet<usize> = state.iter().copied().collect();
        self.equations.iter().all(|e| {
            e.terms
                .iter()
                .filter(|(f, _)| set.contains(f))
                .map(|(_, w)| w)
                .sum::<i64>()
                == e.value
        }) && self
            .parities
            .iter()
            .all(|p| (p.fluents.iter().filter(|f| set.contains(f)).count() % 2 == 1) == p.odd)
    }

    /// The invariants as ASP. For the goal's query (`step` false): each one a
    /// constraint on the state `holds(F,0)`. For a round of proof (`step`
    /// true): the equations as constraints on `holds(F,0)`, and an atom
    /// `broken(l(I))` / `broken(p(I))` for each invariant the transition's
    /// change breaks (its weighted sum of the fluents that became true,
    /// less those that became false, is not 0; its parity of the fluents
    /// that flipped is odd). The parities are not assumed of the state: a
    /// parity is kept by a change alone, and clasp, which cannot reason
    /// over exclusive ors, would try every assignment of a parity's
    /// fluents to see that a move keeps it (a minute on pegEuro without an
    /// answer).
    fn render(&self, out: &mut String, step: bool) {
        let sym = |f: usize| self.fluents[f].to_string();
        if step {
            out.push_str(
                "flip(F) :- holds(F,0), not next(F,0), dom(F).\n\
                 flip(F) :- next(F,0), not holds(F,0).\n",
            );
        }
        for (i, e) in self.equations.iter().enumerate() {
            for (f, w) in &e.terms {
                let _ = writeln!(out, "lw({i},{},{w}).", sym(*f));
            }
            let _ = writeln!(
                out,
                ":- #sum {{ W,F : lw({i},F,W), holds(F,0) }} != {}.",
                e.value
            );
            if step {
                let _ = writeln!(
                    out,
                    "broken(l({i})) :- #sum {{ W,F : lw({i},F,W), next(F,0), not holds(F,0); \
                     -W,F : lw({i},F,W), holds(F,0), not next(F,0) }} != 0."
                );
            }
        }
        for (i, p) in self.parities.iter().enumerate() {
            // A chain of exclusive ors: `x(i,k)` is the parity of the first
            // k+1 atoms (an aggregate with a parity test would be ground
            // once per possible sum).
            let (atom, odd) = if step {
                ("flip", false)
            } else {
                ("holds", p.odd)
            };
            for (k, &f) in p.fluents.iter().enumerate() {
                let f = sym(f);
                let lit = if step {
                    format!("{atom}({f})")
                } else {
                    format!("{atom}({f},0)")
                };
                if k == 0 {
                    let _ = writeln!(out, "x({i},0) :- {lit}.");
                } else {
                    let j = k - 1;
                    let _ = writeln!(
                        out,
                        "x({i},{k}) :- x({i},{j}), not {lit}.\n\
                         x({i},{k}) :- not x({i},{j}), {lit}."
                    );
                }
            }
            let last = p.fluents.len() - 1;
            if step {
                let _ = writeln!(out, "broken(p({i})) :- x({i},{last}).");
            } else {
                let not = if odd { "not " } else { "" };
                let _ = writeln!(out, ":- {not}x({i},{last}).");
            }
        }
    }
}

/// What the analysis found.
#[derive(Clone, Debug)]
pub struct Report {
    /// The highest goal of the first role that a terminal state satisfying
    /// the invariants can give (0 when none gives any).
    pub ceiling: u8,
    pub invariants: Linear,
    /// Rounds of proof.
    pub rounds: usize,
    /// Distinct changes the samples and the rounds gave.
    pub changes: usize,
    pub seconds: f64,
}

/// A sampled transition's change: each fluent that became true (+1) or false
/// (-1).
pub type Change = Vec<(Term, i8)>;

/// The goal ceiling of `game`'s first role that the linear invariants prove,
/// from `samples` (changes of transitions that occur in the game), within
/// `budget` of the calling thread's CPU time. [`Unproven::Not`] says why
/// nothing was proven: the game is too large, a sample names a fluent the
/// relaxed game lacks, the arithmetic overflows, no candidate survives, or
/// the budget ends (or `stop` is set) first.
pub fn goal_ceiling(
    game: &Game,
    samples: &[Change],
    budget: Duration,
    stop: &AtomicBool,
) -> Result<Report, Unproven> {
    let out_of_time = |work: &crate::cputime::ThreadWatch| {
        work.elapsed() > budget || stop.load(Ordering::Relaxed)
    };
    let _guard = super::control::lock();
    let start = Instant::now();
    let work = crate::cputime::ThreadWatch::start();
    let tr = translate(game);
    let (dom, init) = relaxed_fluents(&tr)?;
    if dom.len() > MAX_FLUENTS || dom.is_empty() {
        return Err(Unproven::Not(format!(
            "{} fluents in the relaxed game (at most {MAX_FLUENTS} are analysed)",
            dom.len()
        )));
    }
    let number: HashMap<Symbol, usize> = dom.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let mut by_term: HashMap<Term, usize> = HashMap::new();
    for (i, s) in dom.iter().enumerate() {
        if let Some(t) = tr.map.to_term(*s) {
            by_term.insert(t, i);
        }
    }
    let n = dom.len();
    let mut space = Space::new(n);
    let mut seen: HashSet<Vec<(usize, i8)>> = HashSet::new();
    for change in samples {
        let mut c: Vec<(usize, i8)> = Vec::with_capacity(change.len());
        for (t, d) in change {
            let Some(&i) = by_term.get(t) else {
                return Err(not("a sampled fluent is not in the relaxed game"));
            };
            c.push((i, *d));
        }
        c.sort_unstable();
        if seen.insert(c.clone()) && space.add(&c).is_none() {
            return Err(not("the arithmetic overflows"));
        }
    }
    let init: Vec<usize> = init.iter().filter_map(|s| number.get(s).copied()).collect();
    let mut rounds = 0;
    let proven = loop {
        rounds += 1;
        let Some(mut linear) = space.invariants(&init) else {
            return Err(not("the arithmetic overflows"));
        };
        if linear.equations.is_empty() && linear.parities.is_empty() {
            return Err(not("no sum of the fluents stays the same"));
        }
        linear.fluents = dom.clone();
        if rounds > MAX_ROUNDS {
            return Err(Unproven::Not(format!("not proven in {MAX_ROUNDS} rounds")));
        }
        let mut text = rules_text(&tr, "0", false);
        for f in &dom {
            let _ = writeln!(text, "dom({f}).");
        }
        linear.render(&mut text, true);
        text.push_str("#show holds/2.\n#show next/2.\n");
        let ctl = ground(&text, "step")?;
        let found = breaking_changes(ctl, &number, &|| out_of_time(&work))?;
        match found {
            Breaks::None => break linear,
            Breaks::Unknown => return Err(not("out of time")),
            Breaks::Changes(changes) => {
                for c in changes {
                    if seen.insert(c.clone()) && space.add(&c).is_none() {
                        return Err(not("the arithmetic overflows"));
                    }
                }
            }
        }
    };
    let role = game
        .roles
        .first()
        .and_then(|r| tr.map.ground_term(r))
        .ok_or_else(|| not("the game has no role"))?;
    let Some(ceiling) = highest_goal(&tr, &dom, &proven, &role, &|| out_of_time(&work))? else {
        return Err(not("out of time"));
    };
    Ok(Report {
        ceiling,
        invariants: proven,
        rounds,
        changes: seen.len(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Why [`goal_ceiling`] proved nothing.
#[derive(Debug)]
pub enum Unproven {
    /// What stopped the analysis (a limit, or no candidate survived).
    Not(String),
    /// clingo failed.
    Error(String),
}

fn not(why: &str) -> Unproven {
    Unproven::Not(why.to_string())
}

impl From<String> for Unproven {
    fn from(e: String) -> Self {
        Unproven::Error(e)
    }
}

impl std::fmt::Display for Unproven {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unproven::Not(why) => write!(f, "none proven: {why}"),
            Unproven::Error(e) => write!(f, "{e}"),
        }
    }
}

/// Samples the changes of the transitions of `plan` (a one-player game's
/// moves from the initial state: a good play reaches states random plays
/// do not, such as a peg board's last pegs) and of up to `transitions`
/// transitions of random plays from the initial state (seeded), each play
/// at most `max_steps` moves long, within `budget` of the thread's CPU time
/// (a game whose engine is the prover may take seconds a state), as a
/// [`MachineVisitor`] over any engine.
pub struct Sample {
    pub plan: Vec<Term>,
    pub transitions: usize,
    pub max_steps: usize,
    pub seed: u64,
    pub budget: Duration,
}

/// What a transition changes: the fluents that became true and those that
/// became false.
fn change_between(before: &HashSet<Term>, after: &HashSet<Term>) -> Change {
    let mut change: Change = after
        .difference(before)
        .map(|t| (t.clone(), 1))
        .chain(before.difference(after).map(|t| (t.clone(), -1)))
        .collect();
    change.sort();
    change
}

impl MachineVisitor for Sample {
    type Output = Vec<Change>;

    fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> Vec<Change> {
        let work = crate::cputime::ThreadWatch::start();
        let mut rng = SmallRng::seed_from_u64(self.seed);
        let mut out: Vec<Change> = Vec::new();
        let mut seen: HashSet<Change> = HashSet::new();
        let roles = m.num_roles();
        let mut taken = 0;
        let mut moves = Vec::new();
        if roles == 1 {
            let mut state = m.initial_state();
            let mut before: HashSet<Term> = m.fluents(&state).into_iter().collect();
            for t in &self.plan {
                let Some(mv) = m.parse_move(t).filter(|mv| m.is_legal(&state, 0, mv)) else {
                    break;
                };
                state = m.next_state(&state, &[mv]);
                let after: HashSet<Term> = m.fluents(&state).into_iter().collect();
                let change = change_between(&before, &after);
                if seen.insert(change.clone()) {
                    out.push(change);
                }
                before = after;
            }
        }
        // A play that never ends still gives its first moves' changes.
        while taken < self.transitions {
            let mut state = m.initial_state();
            let mut before: HashSet<Term> = m.fluents(&state).into_iter().collect();
            let mut steps = 0;
            while steps < self.max_steps
                && taken < self.transitions
                && work.elapsed() < self.budget
                && !m.is_terminal(&state)
            {
                let mut joint = Vec::with_capacity(roles);
                for r in 0..roles {
                    m.legal_moves(&state, r, &mut moves);
                    let Some(mv) = moves.choose(&mut rng) else {
                        return out;
                    };
                    joint.push(mv.clone());
                }
                state = m.next_state(&state, &joint);
                let after: HashSet<Term> = m.fluents(&state).into_iter().collect();
                let change = change_between(&before, &after);
                if seen.insert(change.clone()) {
                    out.push(change);
                }
                before = after;
                steps += 1;
                taken += 1;
            }
            if steps == 0 || work.elapsed() >= self.budget {
                break;
            }
        }
        out
    }
}

/// Sampled transitions the linear invariants start from.
const CEILING_SAMPLES: usize = 5000;
/// CPU time for proving them, at most.
const CEILING_BUDGET: Duration = Duration::from_secs(10);

/// Proves the goal ceiling of the linear invariants (see the module) and
/// lowers the context's to it: started once a play has ended below goal
/// 100, since only then can a ceiling below 100 end a solve; `plan` is
/// that play, whose transitions join the samples.
pub(crate) fn prove_ceiling(context: &super::SolveContext, plan: Vec<Term>) {
    // The searches that may reach the ceiling come first.
    crate::priority::step_back(crate::priority::BEHIND);
    let Ok((machine, _)) = context.machine(None) else {
        return;
    };
    let budget = context
        .opts
        .timeout
        .map_or(CEILING_BUDGET, |t| (t / 6).min(CEILING_BUDGET));
    let samples = machine.visit(Sample {
        plan,
        transitions: CEILING_SAMPLES,
        max_steps: context.opts.max_steps,
        seed: 1,
        budget: budget / 2,
    });
    match goal_ceiling(&context.game, &samples, budget, &context.stop) {
        Ok(r) if r.ceiling < 100 => {
            crate::progress!(
                "[bound] no play reaches a goal above {}: {} linear invariants and {} parities \
                 of the fluents hold (from {} changes, {} rounds, {:.2} s)",
                r.ceiling,
                r.invariants.equations.len(),
                r.invariants.parities.len(),
                r.changes,
                r.rounds,
                r.seconds
            );
            context.goal_ceiling.fetch_min(r.ceiling, Ordering::Relaxed);
        }
        Ok(r) => crate::progress!(
            "[bound] linear invariants: goal {} is not ruled out ({:.2} s)",
            r.ceiling,
            r.seconds
        ),
        Err(e) => crate::progress!("[bound] linear invariants: {e}"),
    }
}

/// What a round's solve found.
enum Breaks {
    /// No transition breaks a candidate: all are proven.
    None,
    /// The budget ended first.
    Unknown,
    /// Changes of transitions that break some candidate.
    Changes(Vec<Vec<(usize, i8)>>),
}

fn limit_conflicts(ctl: &mut Control) -> Result<(), String> {
    let conf = ctl.configuration_mut().map_err(err)?;
    let root = conf.root().map_err(err)?;
    let solve = conf.map_at(root, "solve").map_err(err)?;
    let limit = conf.map_at(solve, "solve_limit").map_err(err)?;
    conf.value_set(limit, &CONFLICTS_PER_CALL.to_string())
        .map_err(err)
}

/// Up to [`MODELS_PER_ROUND`] transitions of the step program `ctl`, as the
/// changes they make.
fn breaking_changes(
    mut ctl: Control,
    number: &HashMap<Symbol, usize>,
    out_of_time: &dyn Fn() -> bool,
) -> Result<Breaks, String> {
    limit_conflicts(&mut ctl)?;
    loop {
        let mut handle = ctl.solve(SolveMode::YIELD, &[]).map_err(err)?;
        let mut changes = Vec::new();
        while changes.len() < MODELS_PER_ROUND {
            let Some(m) = handle.model().map_err(err)? else {
                break;
            };
            let mut before = HashSet::new();
            let mut after = HashSet::new();
            for s in m.symbols(ShowType::SHOWN).map_err(err)? {
                let (Ok(name), Ok(args)) = (s.name(), s.arguments()) else {
                    continue;
                };
                let Some(&f) = args.first().and_then(|a| number.get(a)) else {
                    continue;
                };
                match name {
                    "holds" => before.insert(f),
                    "next" => after.insert(f),
                    _ => false,
                };
            }
            let mut c: Vec<(usize, i8)> = after
                .difference(&before)
                .map(|&f| (f, 1))
                .chain(before.difference(&after).map(|&f| (f, -1)))
                .collect();
            c.sort_unstable();
            changes.push(c);
            handle.resume().map_err(err)?;
        }
        if !changes.is_empty() {
            handle.cancel().map_err(err)?;
            handle.close().map_err(err)?;
            return Ok(Breaks::Changes(changes));
        }
        let result = handle.get().map_err(err)?;
        ctl = handle.close().map_err(err)?;
        if result.contains(clingo::SolveResult::UNSATISFIABLE) {
            return Ok(Breaks::None);
        }
        if out_of_time() {
            return Ok(Breaks::Unknown);
        }
    }
}

/// The highest goal value of `role` that some terminal state satisfying
/// `linear` gives, or 0 when none gives any; `None` when the budget ends
/// first.
fn highest_goal(
    tr: &super::translate::Translation,
    dom: &[Symbol],
    linear: &Linear,
    role: &str,
    out_of_time: &dyn Fn() -> bool,
) -> Result<Option<u8>, String> {
    let mut text = rules_text(tr, "0", false);
    for f in dom {
        let _ = writeln!(text, "dom({f}).");
    }
    linear.render(&mut text, false);
    let _ = writeln!(
        text,
        "{{ holds(F,0) : dom(F) }}.\n:- not terminal(0).\n\
         reach(G) :- goal({role},G,0).\n#external want(G) : reach(G).\n\
         :- want(G), not reach(G).\n#show reach/1."
    );
    let mut ctl = ground(&text, "base")?;
    limit_conflicts(&mut ctl)?;
    let mut values: Vec<(u8, clingo::SolverLiteral)> = Vec::new();
    {
        let atoms = ctl.symbolic_atoms().map_err(err)?;
        let sig = clingo::Signature::new("want", 1, true).map_err(err)?;
        for a in atoms.iter_with_signature(sig).map_err(err)? {
            let s = a.symbol().map_err(err)?;
            let arg = s.arguments().map_err(err)?[0];
            if arg.symbol_type().map_err(err)? == SymbolType::Number {
                if let Ok(g) = u8::try_from(arg.number().map_err(err)?) {
                    values.push((g, a.literal().map_err(err)?));
                }
            }
        }
    }
    values.sort_by_key(|v| std::cmp::Reverse(v.0));
    for (g, lit) in values {
        ctl.assign_external(lit, clingo::TruthValue::True)
            .map_err(err)?;
        loop {
            let mut handle = ctl.solve(SolveMode::YIELD, &[]).map_err(err)?;
            let found = handle.model().map_err(err)?.is_some();
            let result = if found {
                handle.cancel().map_err(err)?;
                None
            } else {
                Some(handle.get().map_err(err)?)
            };
            ctl = handle.close().map_err(err)?;
            if found {
                return Ok(Some(g));
            }
            if result.is_some_and(|r| r.contains(clingo::SolveResult::UNSATISFIABLE)) {
                break;
            }
            if out_of_time() {
                return Ok(None);
            }
        }
        ctl.assign_external(lit, clingo::TruthValue::False)
            .map_err(err)?;
    }
    Ok(Some(0))
}
