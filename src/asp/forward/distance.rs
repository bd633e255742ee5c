//! Goal distances: how much work separates each fluent from the fluents goal
//! 100 needs, read off the ground rules; the forward search's beam phase ranks
//! states by it.
//!
//! Three steps over the relaxed ground program (negation left out):
//! 1. *What a move costs*: the additive estimate (h_add) of each `legal` atom,
//!    every `true` atom counting 1 and static facts 0. In Chinese checkers a
//!    step costs 2 (the side to move and the stone), each jump of a chain one
//!    more (the stone jumped over): the cost grows with the work a move needs
//!    from the state.
//! 2. *Where a fluent can go*: a `next` rule that derives `g` from `(true f)`
//!    and a move is an edge `f -> g` weighing the rest of its body (the move
//!    at its `legal` cost); `(cell b red) -> (cell e red)` for `(move b e)`.
//! 3. *What goal 100 needs*: the `true` atoms the goal-100 atom's rules reach
//!    through positive literals; each fluent's distance is its shortest path
//!    to one of them (Dijkstra, backwards).
//!
//! A state's estimate is the sum of its fluents' distances (those with a path;
//! a fluent already needed counts 0). It is a heuristic, not a bound: it may
//! count one target for several fluents and ignores what `not` forbids.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use crate::gdl::{kw, Game, Term};
use crate::reasoner::ground::{AtomId, GroundProgram};

const UNREACHED: u32 = u32::MAX;

/// The goal distances of a game's fluents.
pub struct Distances {
    dist: HashMap<Term, u32>,
}

impl Distances {
    /// The distances over the ground rules `g` of `game`, or `None` when
    /// its first role has no goal 100, or no fluent is a positive distance
    /// away from what goal 100 needs (the estimate would rank nothing).
    pub fn new(game: &Game, g: &GroundProgram) -> Option<Distances> {
        let view = View {
            g,
            legal_of: g.legal_of_does(),
        };
        let cost = view.move_costs();
        let into = view.edges(&cost);
        let needed = view.needed(g.first_role_goal100(game)?);
        let dist: HashMap<Term, u32> = shortest_from(&needed, &into)
            .into_iter()
            .map(|(f, d)| (g.pool.to_term(f), d))
            .collect();
        dist.values().any(|&d| d > 0).then_some(Distances { dist })
    }

    /// The estimate of a state given by its fluents: the sum of their
    /// distances (fluents without a path to what goal 100 needs count 0).
    pub fn estimate(&self, fluents: &[Term]) -> u64 {
        fluents
            .iter()
            .filter_map(|f| self.dist.get(f))
            .map(|&d| u64::from(d))
            .sum()
    }
}

/// The ground program as the three steps read it.
struct View<'a> {
    g: &'a GroundProgram,
    /// Each `does` atom's `legal` atom: a move costs what its legality does.
    legal_of: Vec<Option<AtomId>>,
}

impl View<'_> {
    fn functor(&self, a: AtomId) -> crate::gdl::Sym {
        self.g.pool.functor(self.g.atoms[a as usize])
    }

    fn arg(&self, a: AtomId, i: usize) -> u32 {
        self.g.pool.args(self.g.atoms[a as usize])[i]
    }

    /// The cost of the positive body `pos` (without `skip`): the sum of its
    /// atoms' costs, a move at its `legal` atom's.
    fn body_cost(&self, cost: &[u32], pos: &[AtomId], skip: Option<AtomId>) -> u32 {
        let mut sum: u32 = 0;
        for &p in pos {
            if Some(p) == skip {
                continue;
            }
            let p = self.legal_of[p as usize].unwrap_or(p);
            let c = cost[p as usize];
            if c == UNREACHED {
                return UNREACHED;
            }
            sum = sum.saturating_add(c);
        }
        sum
    }

    /// Step 1, h_add: each atom's cost, a rule's body costing the sum of its
    /// positive atoms, every `true` atom 1.
    fn move_costs(&self) -> Vec<u32> {
        let g = self.g;
        let n = g.atoms.len();
        let mut cost = vec![UNREACHED; n];
        for a in 0..n as AtomId {
            if self.functor(a) == kw::TRUE {
                cost[a as usize] = 1;
            }
        }
        loop {
            let mut changed = false;
            for r in &g.rules {
                let c = self.body_cost(&cost, &r.pos, None);
                let h = r.head as usize;
                if c < cost[h] && self.functor(r.head) != kw::TRUE {
                    cost[h] = c;
                    changed = true;
                }
            }
            if !changed {
                return cost;
            }
        }
    }

    /// Step 2, edges f -> g from the `next` rules, at their cheapest: for each
    /// fluent `g`, the fluents `f` it comes from and the weight of the rest
    /// of the rule's body.
    fn edges(&self, cost: &[u32]) -> HashMap<u32, Vec<(u32, u32)>> {
        let mut into: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
        for r in &self.g.rules {
            if self.functor(r.head) != kw::NEXT {
                continue;
            }
            let to = self.arg(r.head, 0);
            for &p in &r.pos {
                if self.functor(p) != kw::TRUE || self.arg(p, 0) == to {
                    continue;
                }
                let w = self.body_cost(cost, &r.pos, Some(p));
                if w != UNREACHED {
                    into.entry(to).or_default().push((self.arg(p, 0), w));
                }
            }
        }
        into
    }

    /// Step 3, the fluents (`true` atoms) the atom `goal` reaches through
    /// positive literals.
    fn needed(&self, goal: AtomId) -> HashSet<u32> {
        let g = self.g;
        let mut rules_of: HashMap<AtomId, Vec<usize>> = HashMap::new();
        for (i, r) in g.rules.iter().enumerate() {
            rules_of.entry(r.head).or_default().push(i);
        }
        let mut needed: HashSet<u32> = HashSet::new();
        let mut seen: HashSet<AtomId> = HashSet::from([goal]);
        let mut todo = vec![goal];
        while let Some(a) = todo.pop() {
            for &i in rules_of.get(&a).map(Vec::as_slice).unwrap_or(&[]) {
                for &p in &g.rules[i].pos {
                    if self.functor(p) == kw::TRUE {
                        needed.insert(self.arg(p, 0));
                    } else if seen.insert(p) {
                        todo.push(p);
                    }
                }
            }
        }
        needed
    }
}

/// Dijkstra from the `needed` fluents along the edges `into`, backwards:
/// each fluent's shortest distance to one of them.
fn shortest_from(needed: &HashSet<u32>, into: &HashMap<u32, Vec<(u32, u32)>>) -> HashMap<u32, u32> {
    let mut dist: HashMap<u32, u32> = HashMap::new();
    let mut heap = BinaryHeap::new();
    for &f in needed {
        dist.insert(f, 0);
        heap.push(Reverse((0u32, f)));
    }
    while let Some(Reverse((d, f))) = heap.pop() {
        if dist.get(&f).is_some_and(|&x| x < d) {
            continue;
        }
        for &(from, w) in into.get(&f).map(Vec::as_slice).unwrap_or(&[]) {
            let nd = d.saturating_add(w);
            if dist.get(&from).is_none_or(|&x| nd < x) {
                dist.insert(from, nd);
                heap.push(Reverse((nd, from)));
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdl::{parse, parser::parse_ground_terms};
    use crate::reasoner::ground::{ground, Limits};

    fn distances(g: &Game) -> Option<Distances> {
        Distances::new(g, &ground(g, &Limits::default()).unwrap())
    }

    /// A token walks a line 0..5 one step a move; goal 100 at 5. A clock
    /// fluent that no goal needs counts nothing.
    const LINE: &str = "(role r) (init (at 0)) (init (clock 0))
        (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
        (<= (legal r (go ?x ?y)) (true (at ?x)) (succ ?x ?y))
        (<= (next (at ?y)) (true (at ?x)) (does r (go ?x ?y)))
        (<= (next (clock ?y)) (true (clock ?x)) (succ ?x ?y))
        (<= terminal (true (at 5)))
        (<= (goal r 100) (true (at 5)))
        (<= (goal r 0) (not (true (at 5))))";

    fn game(text: &str) -> Game {
        Game::new(parse(text, "line.kif").unwrap()).unwrap()
    }

    #[test]
    fn a_walk_home_costs_a_step_a_move() {
        let g = game(LINE);
        let d = distances(&g).expect("informative");
        let state = |text: &str| parse_ground_terms(&format!("({text})"), &g.symbols).unwrap();
        assert_eq!(d.estimate(&state("(at 5) (clock 3)")), 0);
        assert_eq!(d.estimate(&state("(at 2) (clock 2)")), 3);
        assert_eq!(d.estimate(&state("(at 0) (clock 0)")), 5);
    }

    /// Goal 100 through `not` alone names no fluent to bring anywhere.
    #[test]
    fn a_goal_by_negation_gives_no_distances() {
        let g = game(&LINE.replace(
            "(<= (goal r 100) (true (at 5)))",
            "(<= (goal r 100) (not (true (at 4))))",
        ));
        assert!(distances(&g).is_none());
    }
}
