//! Latches: fluents that, once true, stay true (positive latches: a mark on
//! a tic-tac-toe cell, a square a knight has visited) or, once false, stay
//! false (negative latches: a blank cell), read from the ground rules alone.
//!
//! A fluent `f` is a positive latch when some ground rule for `(next f)`
//! needs nothing but `(true f)` and atoms true in every state; a negative
//! latch when every ground rule for `(next f)` needs `(true f)` (no rule at
//! all: false after the first step, and for ever). Both are sufficient
//! conditions read off single rules, so a latch found is one; a latch kept
//! by a combination of rules (two rules whose conditions cover each other)
//! is missed. Atoms true in every state are the program's facts and what
//! negation-free rules derive from them alone: they read no state.
//!
//! What latches say: a goal or terminal condition that needs a negative
//! latch that is false, or the absence of a positive latch that is true,
//! can no longer be met (Sancho's latch analysis, 2014).
//!
//! They also bound how long a game lasts ([`play_bound`]): when every move
//! of a role makes a positive latch true that was false (a knight leaves a
//! new hole behind), the latches that hold only grow, one at least a move,
//! and a play has at most as many moves as there are such latches false at
//! the start. No search can prove that by exhaustion (it is the pigeonhole
//! principle), and it is what proves a tour's best goal.

use hashbrown::{HashMap, HashSet};

use crate::gdl::{kw, Term};

use super::program::{AtomId, GroundProgram};

/// The latches of a ground game, as fluent terms (`f` of `(true f)`), in
/// the order of the program's atoms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latches {
    /// Once true, true for ever.
    pub positive: Vec<Term>,
    /// Once false, false for ever.
    pub negative: Vec<Term>,
}

/// The latches of `p` (see the module comment for what is found).
pub fn latches(p: &GroundProgram) -> Latches {
    let always = always_true(p);
    let by_head = p.rules_by_head();
    let mut out = Latches::default();
    for (a, &t) in p.atoms.iter().enumerate() {
        if p.pool.functor(t) != kw::TRUE {
            continue;
        }
        let a = a as AtomId;
        let fluent = p.pool.to_term(p.pool.args(t)[0]);
        let next = Term::Func(kw::NEXT, vec![fluent.clone()]);
        let rules: &[usize] = match p.pool.find_term(&next).and_then(|n| p.atom(n)) {
            Some(n) => &by_head[n as usize],
            None => &[],
        };
        let keeps = |&i: &usize| {
            let r = &p.rules[i];
            r.neg.is_empty() && r.pos.iter().all(|&b| b == a || always[b as usize])
        };
        if rules.iter().any(keeps) {
            out.positive.push(fluent);
        } else if rules.iter().all(|&i| p.rules[i].pos.contains(&a)) {
            out.negative.push(fluent);
        }
    }
    out
}

/// A bound on the length of every play, from the positive latches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayBound {
    /// No play has more moves.
    pub moves: usize,
    /// The positive latches some move is certain to make true (those the
    /// count runs over).
    pub latches: usize,
    /// How many of them hold at the start.
    pub at_start: usize,
}

/// How deep [`play_bound`] follows derived atoms when it asks whether a
/// rule's body certainly holds.
const CERTAIN_DEPTH: usize = 4;

/// The most legal rules [`play_bound`] looks at: beyond it, no bound.
const MAX_LEGAL_RULES: usize = 200_000;

/// A bound on the number of moves of any play of `p` from the state whose
/// fluents are `init`, when some role's every legal move makes a new
/// positive latch true.
///
/// For each ground rule `(legal R M) :- C, not N` of that role, some
/// positive latch `f` must be certain to become true (a rule for
/// `(next f)` holds given `(does R M)`, `C` and `not N`) and certain to be
/// false before (`(true f)` is in `N`, or `terminal` would hold given `C`
/// and `(true f)`: moves are made in states that are not terminal). Then
/// each move adds one of those latches, none ever goes away, and a play
/// has at most as many moves as there are of them false at the start.
/// "Certain" leans the safe way: what the analysis cannot decide does not
/// count, so a bound found holds.
pub fn play_bound(p: &GroundProgram, init: &[Term]) -> Option<PlayBound> {
    let positive: HashSet<AtomId> = latches(p)
        .positive
        .iter()
        .filter_map(|f| {
            let t = p.pool.find_term(&Term::Func(kw::TRUE, vec![f.clone()]))?;
            p.atom(t)
        })
        .collect();
    if positive.is_empty() {
        return None;
    }
    let c = Certain::new(p);
    let terminal = p
        .pool
        .find_term(&Term::Const(kw::TERMINAL))
        .and_then(|t| p.atom(t));
    // Per latch's `true` atom, its `next` atom's rules; per `next` atom of
    // a latch, the latch's `true` atom.
    let mut latch_of_next: HashMap<AtomId, AtomId> = HashMap::new();
    for &t in &positive {
        let fluent = p.pool.args(p.atoms[t as usize])[0];
        let next = Term::Func(kw::NEXT, vec![p.pool.to_term(fluent)]);
        if let Some(n) = p.pool.find_term(&next).and_then(|n| p.atom(n)) {
            latch_of_next.insert(n, t);
        }
    }
    let mut does_of_legal: HashMap<AtomId, AtomId> = HashMap::new();
    for (d, l) in p.legal_of_does().into_iter().enumerate() {
        if let Some(l) = l {
            does_of_legal.insert(l, d as AtomId);
        }
    }
    // Per atom, the `next` rules of latches that read it.
    let mut next_rules_using: HashMap<AtomId, Vec<usize>> = HashMap::new();
    for (i, r) in p.rules.iter().enumerate() {
        if latch_of_next.contains_key(&r.head) {
            for &a in &r.pos {
                next_rules_using.entry(a).or_default().push(i);
            }
        }
    }
    // The legal rules of each role.
    let mut by_role: HashMap<crate::reasoner::terms::TermId, Vec<usize>> = HashMap::new();
    for (i, r) in p.rules.iter().enumerate() {
        let t = p.atoms[r.head as usize];
        if p.pool.functor(t) == kw::LEGAL && p.pool.args(t).len() == 2 {
            by_role.entry(p.pool.args(t)[0]).or_default().push(i);
        }
    }
    if by_role.values().map(Vec::len).sum::<usize>() > MAX_LEGAL_RULES {
        return None;
    }
    let init: HashSet<AtomId> = init
        .iter()
        .filter_map(|f| {
            let t = p.pool.find_term(&Term::Func(kw::TRUE, vec![f.clone()]))?;
            p.atom(t)
        })
        .collect();
    let mut best: Option<PlayBound> = None;
    'roles: for rules in by_role.values() {
        let mut witnesses: HashSet<AtomId> = HashSet::new();
        for &i in rules {
            let lr = &p.rules[i];
            let mut known: Vec<AtomId> = lr.pos.clone();
            if let Some(&d) = does_of_legal.get(&lr.head) {
                known.push(d);
            }
            let mut found = false;
            let candidates = known
                .iter()
                .filter_map(|a| next_rules_using.get(a))
                .flatten();
            for &j in candidates {
                let nr = &p.rules[j];
                let latch = latch_of_next[&nr.head];
                if witnesses.contains(&latch) && found {
                    continue;
                }
                let made = nr
                    .pos
                    .iter()
                    .all(|&a| c.holds(a, &known, &lr.neg, CERTAIN_DEPTH))
                    && nr.neg.iter().all(|a| lr.neg.contains(a));
                if !made {
                    continue;
                }
                let was_false = lr.neg.contains(&latch)
                    || terminal.is_some_and(|t| {
                        let mut with = lr.pos.clone();
                        with.push(latch);
                        c.holds(t, &with, &lr.neg, CERTAIN_DEPTH)
                    });
                if was_false {
                    witnesses.insert(latch);
                    found = true;
                }
            }
            if !found {
                continue 'roles;
            }
        }
        if rules.is_empty() {
            continue;
        }
        let at_start = witnesses.iter().filter(|a| init.contains(*a)).count();
        let b = PlayBound {
            moves: witnesses.len() - at_start,
            latches: witnesses.len(),
            at_start,
        };
        if best.as_ref().is_none_or(|x| b.moves < x.moves) {
            best = Some(b);
        }
    }
    best
}

/// Whether an atom certainly holds given atoms known true and atoms known
/// false, following derived atoms a few rules deep.
struct Certain<'a> {
    p: &'a GroundProgram,
    always: Vec<bool>,
    by_head: Vec<Vec<usize>>,
}

impl<'a> Certain<'a> {
    fn new(p: &'a GroundProgram) -> Certain<'a> {
        Certain {
            p,
            always: always_true(p),
            by_head: p.rules_by_head(),
        }
    }

    fn holds(&self, a: AtomId, known: &[AtomId], false_: &[AtomId], depth: usize) -> bool {
        if self.always[a as usize] || known.contains(&a) {
            return true;
        }
        if depth == 0 || false_.contains(&a) {
            return false;
        }
        self.by_head[a as usize].iter().any(|&i| {
            let r = &self.p.rules[i];
            r.neg.iter().all(|n| false_.contains(n))
                && r.pos
                    .iter()
                    .all(|&b| self.holds(b, known, false_, depth - 1))
        })
    }
}

/// Per atom, whether it holds in every state: a fact, or the head of a
/// rule without negation whose positive atoms all do (none reads `true` or
/// `does`, which no fact is).
fn always_true(p: &GroundProgram) -> Vec<bool> {
    let mut always = vec![false; p.atoms.len()];
    let state = |a: AtomId| {
        let f = p.pool.functor(p.atoms[a as usize]);
        f == kw::TRUE || f == kw::DOES
    };
    loop {
        let mut changed = false;
        for r in &p.rules {
            if always[r.head as usize] || !r.neg.is_empty() || state(r.head) {
                continue;
            }
            if r.pos.iter().all(|&b| always[b as usize]) {
                always[r.head as usize] = true;
                changed = true;
            }
        }
        if !changed {
            return always;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdl::print::term_to_string;
    use crate::reasoner::ground::{ground, Limits};

    fn of(file: &str) -> (Vec<String>, Vec<String>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games")
            .join(file);
        let game = crate::gdl::load(&path).expect("loads");
        let p = ground(&game, &Limits::default()).expect("grounds");
        let l = latches(&p);
        let names = |ts: &[Term]| -> Vec<String> {
            ts.iter()
                .map(|t| term_to_string(t, &game.symbols))
                .collect()
        };
        (names(&l.positive), names(&l.negative))
    }

    /// Tic-tac-toe: a mark stays, a blank once filled never comes back;
    /// whose turn it is and nothing else flips.
    #[test]
    fn tic_tac_toe_marks_stay_and_blanks_do_not_return() {
        let (pos, neg) = of("ticTacToe.kif");
        assert_eq!(pos.len(), 18, "{pos:?}");
        assert!(
            pos.iter()
                .all(|f| f.starts_with("(cell ") && !f.ends_with(" b)")),
            "{pos:?}"
        );
        assert_eq!(neg.len(), 9, "{neg:?}");
        assert!(
            neg.iter()
                .all(|f| f.starts_with("(cell ") && f.ends_with(" b)")),
            "{neg:?}"
        );
    }

    /// Breakthrough: pieces move into and out of cells, so nothing stays;
    /// but pawns only go forward, so a piece never comes back to its own
    /// home row once it left it: those sixteen are negative latches, and
    /// no other cell is.
    #[test]
    fn breakthrough_pieces_never_return_to_their_home_row() {
        let (pos, neg) = of("breakthrough.kif");
        assert!(pos.iter().all(|f| !f.starts_with("(cellHolds ")), "{pos:?}");
        let board: Vec<&String> = neg
            .iter()
            .filter(|f| f.starts_with("(cellHolds "))
            .collect();
        assert_eq!(board.len(), 16, "{neg:?}");
        assert!(
            board
                .iter()
                .all(|f| f.ends_with(" 1 white)") || f.ends_with(" 8 black)")),
            "{board:?}"
        );
    }

    fn bound_of(file: &str) -> Option<PlayBound> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games")
            .join(file);
        let game = crate::gdl::load(&path).expect("loads");
        let p = ground(&game, &Limits::default()).expect("grounds");
        let prover = crate::reasoner::Prover::try_new(game).expect("a prover");
        let init = crate::reasoner::StateMachine::fluents(
            &prover,
            &crate::reasoner::StateMachine::initial_state(&prover),
        );
        play_bound(&p, &init)
    }

    /// A knight's tour on 8 by 8 squares: every move leaves a hole where
    /// the knight stood, which it was not (the game ends when the knight
    /// lands on a hole), so no play has more than 64 moves; on the 9 by 9
    /// board, 81. Tic-tac-toe's marks are latches too, but the rules do not
    /// say that a blank cell holds no mark, and the player not to move
    /// makes no mark: no bound.
    #[test]
    fn tours_end_within_their_squares() {
        let b = bound_of("knightsTourLarge_ggpbase2010.kif").expect("a bound");
        assert_eq!((b.moves, b.latches, b.at_start), (64, 64, 0));
        let b = bound_of("knightsTourLarge.kif").expect("a bound");
        assert_eq!((b.moves, b.latches, b.at_start), (81, 81, 0));
        assert_eq!(bound_of("ticTacToe.kif"), None);
        assert_eq!(bound_of("breakthrough.kif"), None);
    }

    /// A knight's tour (a one-player corpus game on a 9 by 9 board): a
    /// square the knight has left is a hole for ever.
    #[test]
    fn a_knights_tour_leaves_holes_for_ever() {
        let (pos, neg) = of("knightsTourLarge.kif");
        let holes = pos.iter().filter(|f| f.ends_with(" hole)")).count();
        assert_eq!(holes, 81, "{pos:?}");
        assert!(pos.iter().all(|f| f.ends_with(" hole)")), "{pos:?}");
        assert!(
            neg.is_empty() || neg.iter().all(|f| !f.ends_with(" hole)")),
            "{neg:?}"
        );
    }
}
