//! The relaxed-reachability bound (h_max): the fewest moves before goal 100
//! can hold at all, read off the ground rules with `not` left out.
//!
//! Leave out every negative literal and let every legal move happen at once:
//! the fluents reachable within k moves then only grow from layer to layer,
//! and each layer holds every fluent of every state a real play reaches in k
//! moves (a play's state is a subset of its layer, and what a subset derives
//! without `not` the layer derives too). So when goal 100 and `terminal`
//! first become derivable in layer k, no plan to goal 100 has fewer than k
//! moves. Where the goal waits for a counter to run down one value a move
//! (peg solitaire's `(pegs s1)` from `(pegs s32)`), the bound is every plan's
//! length, which neither clasp nor a search can prove by exhaustion; where
//! only a clock ends the game, it is the clock's length.
//!
//! The layers are computed incrementally, each rule's satisfied positive
//! literals counted once over the whole run: the work is linear in the size
//! of the ground program, whatever the number of layers.

use crate::gdl::{kw, Game, Term};
use crate::reasoner::ground::{AtomId, GroundProgram};
use crate::reasoner::terms::TermId;
use hashbrown::{HashMap, HashSet};

/// The fewest moves a plan to goal 100 needs by relaxed reachability, when
/// it is above 1; `init` are the fluents of the initial state, `max_steps`
/// the longest plan looked for (layers beyond it are not built), and
/// `clock_end` the moves after which a clock left out of `game` (see
/// [`super::breadth::without_clock`]) ends it: from there on the game may be
/// over whatever its other `terminal` rules say.
pub fn bound(
    game: &Game,
    g: &GroundProgram,
    init: &[Term],
    max_steps: usize,
    clock_end: Option<usize>,
) -> Option<usize> {
    let goal = g.first_role_goal100(game)?;
    let mut layers = Layers::new(g);
    let terminal = std::mem::take(&mut layers.terminal);
    let mut fresh: Vec<TermId> = init.iter().filter_map(|t| g.pool.find_term(t)).collect();
    for k in 0..=max_steps {
        let next = layers.advance(&fresh);
        let over = clock_end.is_some_and(|e| k >= e)
            || terminal.iter().any(|&t| layers.derived[t as usize]);
        if layers.derived[goal as usize] && over {
            return (k > 1).then_some(k);
        }
        if next.is_empty() {
            // Nothing new can ever hold: the game may end by its clock
            // alone, else goal 100 is out of reach (other analyses say so;
            // this one claims no bound).
            return match clock_end {
                Some(e) if layers.derived[goal as usize] && e <= max_steps => (e > 1).then_some(e),
                _ => None,
            };
        }
        fresh = next;
    }
    None
}

/// The highest goal of `game`'s first role that relaxed reachability
/// derives within `within` moves: no state a play reaches in that many
/// moves gives a higher one (0 when no goal is derivable). With a bound on
/// every play's length ([`crate::reasoner::ground::play_bound`], a clock),
/// it is the best goal any play can reach.
pub fn goal_ceiling(game: &Game, g: &GroundProgram, init: &[Term], within: usize) -> u8 {
    let goals: Vec<(AtomId, u8)> = g
        .first_role_goals(game)
        .into_iter()
        .filter_map(|(a, v)| Some((a, v.parse().ok()?)))
        .collect();
    let mut layers = Layers::new(g);
    let mut fresh: Vec<TermId> = init.iter().filter_map(|t| g.pool.find_term(t)).collect();
    for _ in 0..=within {
        fresh = layers.advance(&fresh);
        if fresh.is_empty() {
            break;
        }
    }
    goals
        .iter()
        .filter(|&&(a, _)| layers.derived[a as usize])
        .map(|&(_, v)| v)
        .max()
        .unwrap_or(0)
}

/// The relaxed program's state across layers.
struct Layers<'a> {
    g: &'a GroundProgram,
    derived: Vec<bool>,
    /// Per rule, its positive literals not yet derived.
    missing: Vec<usize>,
    /// Per atom, the rules it occurs in positively.
    uses: Vec<Vec<u32>>,
    /// Per `legal` atom, its `does` atom.
    does_of_legal: HashMap<AtomId, AtomId>,
    true_of: HashMap<TermId, AtomId>,
    /// `(next f)` atoms with their fluent.
    nexts: Vec<(AtomId, TermId)>,
    /// Fluents in some layer so far.
    reached: HashSet<TermId>,
    terminal: Vec<AtomId>,
}

impl<'a> Layers<'a> {
    fn new(g: &'a GroundProgram) -> Layers<'a> {
        let n = g.atoms.len();
        let mut uses = vec![Vec::new(); n];
        let mut missing = Vec::with_capacity(g.rules.len());
        for (i, r) in g.rules.iter().enumerate() {
            for &p in &r.pos {
                uses[p as usize].push(i as u32);
            }
            missing.push(r.pos.len());
        }
        let mut does_of_legal = HashMap::new();
        for (d, l) in g.legal_of_does().into_iter().enumerate() {
            if let Some(l) = l {
                does_of_legal.insert(l, d as AtomId);
            }
        }
        let (mut true_of, mut nexts, mut terminal) = (HashMap::new(), Vec::new(), Vec::new());
        for (a, &t) in g.atoms.iter().enumerate() {
            let a = a as AtomId;
            let f = g.pool.functor(t);
            let args = g.pool.args(t);
            if f == kw::TRUE && args.len() == 1 {
                true_of.insert(args[0], a);
            } else if f == kw::NEXT && args.len() == 1 {
                nexts.push((a, args[0]));
            } else if f == kw::TERMINAL {
                terminal.push(a);
            }
        }
        Layers {
            g,
            derived: vec![false; n],
            missing,
            uses,
            does_of_legal,
            true_of,
            nexts,
            reached: HashSet::new(),
            terminal,
        }
    }

    /// Adds `fresh` fluents to the layer, derives what follows, and returns
    /// the fluents the next layer adds. The first call also derives the
    /// rules without positive literals.
    fn advance(&mut self, fresh: &[TermId]) -> Vec<TermId> {
        let mut queue: Vec<AtomId> = Vec::new();
        if self.reached.is_empty() {
            for (i, r) in self.g.rules.iter().enumerate() {
                if self.missing[i] == 0 {
                    queue.push(r.head);
                }
            }
        }
        for &f in fresh {
            if self.reached.insert(f) {
                if let Some(&a) = self.true_of.get(&f) {
                    queue.push(a);
                }
            }
        }
        while let Some(a) = queue.pop() {
            if std::mem::replace(&mut self.derived[a as usize], true) {
                continue;
            }
            if let Some(&d) = self.does_of_legal.get(&a) {
                queue.push(d);
            }
            for &r in &self.uses[a as usize] {
                let m = &mut self.missing[r as usize];
                *m -= 1;
                if *m == 0 {
                    queue.push(self.g.rules[r as usize].head);
                }
            }
        }
        self.nexts
            .iter()
            .filter(|&&(a, f)| self.derived[a as usize] && !self.reached.contains(&f))
            .map(|&(_, f)| f)
            .collect()
    }
}
