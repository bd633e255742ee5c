//! Sure wins: the moves that the rules make a win in every state where they
//! are legal, read off the network's gates once when it is compiled.
//!
//! A move is a sure win for role `r` when its `does` input alone forces the
//! `next` value of some fluent, and that fluent alone forces both
//! `terminal` and `r`'s goal 100, whatever else holds: breakthrough's moves
//! onto the far row (the rule `(<= whiteWin (true (cellHolds ?x 8
//! white)))`), a race's step over the line. "Alone forces" is read through
//! ORs (any input that forces it) and ANDs (what forces every input); a
//! negated input forces nothing, so the analysis only ever misses wins and
//! never names a move that is not one. Connect four has none: no single
//! fluent ends it, four do together.
//!
//! The playouts that take sure wins ([`crate::reasoner::PlayoutLimits`]'s
//! `sure_wins`) look them up at every step instead of trying each legal
//! move (decisive moves, Teytaud and Teytaud 2010): a check of a handful
//! of legal gates, where trying a move costs a step of the network.

use std::rc::Rc;

use hashbrown::HashMap;

use super::eval::Gates;
use super::lit::Node;
use super::outputs::Outputs;

/// Sets larger than this are given up (read as forcing nothing): a sure
/// win goes through a handful of fluents (breakthrough's terminal has 16).
const MOST_FORCING: usize = 256;
/// Gates deeper than this below an output are read as forcing nothing: a
/// win is a few rules from `terminal` (breakthrough's is two), and the
/// recursion stays shallow on networks thousands of gates deep.
const DEEPEST: usize = 12;
/// Set elements the whole analysis may touch before it gives up and names
/// no sure win: linear work on any network, a few milliseconds.
const WORK: usize = 2_000_000;

/// Per role, its sure wins: as legal-table entries (group, legal node,
/// move) for the playouts, and as moves, ascending.
#[derive(Default)]
pub(super) struct SureWins {
    pub(super) entries: Vec<Vec<(u32, Node, u32)>>,
    pub(super) moves: Vec<Vec<u32>>,
}

/// The input nodes (fluents and `does`) each of which, set true alone,
/// forces a node true whatever the other inputs are; memoised per node.
struct Forcing<'a> {
    gates: &'a Gates,
    memo: HashMap<Node, Rc<[Node]>>,
    /// Set elements touched so far (see [`WORK`]).
    work: usize,
}

impl Forcing<'_> {
    /// Whether the analysis ran out of [`WORK`]: its answers then are void.
    fn exhausted(&self) -> bool {
        self.work > WORK
    }

    /// The sorted inputs that force `n` true, read at most [`DEEPEST`]
    /// gates down from `depth`.
    fn of(&mut self, n: Node, depth: usize) -> Rc<[Node]> {
        if let Some(v) = self.memo.get(&n) {
            return Rc::clone(v);
        }
        if depth > DEEPEST || self.exhausted() {
            return Rc::from([]);
        }
        // Cycles (recursive components) read as forcing nothing until done.
        self.memo.insert(n, Rc::from([]));
        let v: Rc<[Node]> = self.compute(n, depth).into();
        self.work += v.len() + 1;
        self.memo.insert(n, Rc::clone(&v));
        v
    }

    fn compute(&mut self, n: Node, depth: usize) -> Vec<Node> {
        if n == Node::FALSE || n == Node::TRUE {
            return Vec::new();
        }
        let gates = self.gates;
        let inputs = gates.inputs(n);
        let and = gates.is_and(n);
        if inputs.is_empty() {
            // An input node (an OR over nothing); an AND over nothing is
            // always true and forced by nothing in particular.
            return if and { Vec::new() } else { vec![n] };
        }
        if and {
            if inputs.iter().any(|l| l.negated()) {
                return Vec::new();
            }
            let mut acc: Option<Vec<Node>> = None;
            for l in inputs {
                let f = self.of(l.node(), depth + 1);
                self.work += f.len();
                let next: Vec<Node> = match acc {
                    None => f.to_vec(),
                    Some(a) => a
                        .into_iter()
                        .filter(|x| f.binary_search(x).is_ok())
                        .collect(),
                };
                if next.is_empty() {
                    return Vec::new();
                }
                acc = Some(next);
            }
            acc.unwrap_or_default()
        } else {
            let mut all = Vec::new();
            for l in inputs.iter().filter(|l| !l.negated()) {
                let f = self.of(l.node(), depth + 1);
                self.work += f.len();
                all.extend_from_slice(&f);
                if all.len() > MOST_FORCING {
                    return Vec::new();
                }
            }
            all.sort_unstable();
            all.dedup();
            all
        }
    }
}

/// The sure wins of every role (see the module's doc).
pub(super) fn sure_wins(gates: &Gates, out: &Outputs, fluents: usize) -> SureWins {
    let mut forcing = Forcing {
        gates,
        memo: HashMap::new(),
        work: 0,
    };
    let ends = forcing.of(out.terminal, 0);
    let moves = if out.goals.is_empty() {
        0
    } else {
        out.does.len() / out.goals.len()
    };
    let mut wins = SureWins::default();
    for (r, goals) in out.goals.iter().enumerate() {
        let mut found: Vec<u32> = Vec::new();
        if let Some(&(won, _)) = goals.iter().find(|&&(_, v)| v == 100) {
            let winning = forcing.of(won, 0);
            let does_of: HashMap<Node, u32> = (0..moves)
                .filter_map(|m| {
                    let d = out.does[r * moves + m];
                    (d != Node::FALSE).then_some((d, m as u32))
                })
                .collect();
            for f in ends
                .iter()
                .filter(|f| winning.binary_search(f).is_ok())
                .filter_map(|f| f.fluent_index(fluents))
            {
                for &d in forcing.of(out.next.node(0, f), 0).iter() {
                    if let Some(&m) = does_of.get(&d) {
                        found.push(m);
                    }
                }
            }
        }
        if forcing.exhausted() {
            found.clear();
        }
        found.sort_unstable();
        found.dedup();
        let (a, b) = out.legal.role_groups[r];
        let mut entries = Vec::new();
        for g in a..b {
            for &(n, m) in out.legal.entries.row(g as usize) {
                if found.binary_search(&m).is_ok() {
                    entries.push((g, n, m));
                }
            }
        }
        wins.entries.push(entries);
        wins.moves.push(found);
    }
    wins
}
