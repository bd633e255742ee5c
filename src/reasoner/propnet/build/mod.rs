//! Compiling a ground program into a [`Propnet`], in steps: the gates from the
//! rules ([`gates`]), the outputs read off the atoms ([`outputs`]), the legal
//! gates split by guards and their readers factored ([`guards`]), the programs
//! each output needs, the move program specialised to each role's pass move
//! ([`specialize`]), and the tables propagation reads. This file holds the
//! builder's state, the growing gate table and the sequence of steps.

mod gates;
mod guards;
mod outputs;
mod specialize;

use hashbrown::HashMap;
use std::sync::{Arc, Mutex};

use super::eval::{Gates, Item, Programs};
use super::lit::{Lit, Node};
use super::outputs::{NextTable, Outputs};
use super::propagate::Propagation;
use super::rows::Rows;
use super::{NetStats, Propnet, PropnetError, PropnetState, Terms};
use crate::gdl::{kw, Game};
use crate::reasoner::ground::{AtomId, GroundProgram};
use crate::reasoner::terms::TermId;

/// Compiles `gp`, the ground program of `game`, into a network of at most
/// `max_nodes` nodes.
pub(super) fn compile(
    game: Game,
    gp: GroundProgram,
    max_nodes: usize,
) -> Result<Propnet, PropnetError> {
    Builder::new(game, gp, max_nodes)?.finish()
}

/// A gate while the network grows: its kind and its span of the table's
/// literals (a gate rewritten in place gets a new span).
#[derive(Clone, Copy, Debug)]
struct Gate {
    and: bool,
    start: u32,
    end: u32,
}

/// The gates built so far, and per node whether it depends on `does`.
#[derive(Default)]
struct GateTable {
    gates: Vec<Gate>,
    lits: Vec<Lit>,
    is_move: Vec<bool>,
}

impl GateTable {
    fn len(&self) -> usize {
        self.gates.len()
    }

    /// The node the next gate pushed gets.
    fn next_node(&self) -> Node {
        Node::at(self.gates.len())
    }

    fn inputs(&self, n: Node) -> &[Lit] {
        let g = self.gates[n.idx()];
        &self.lits[g.start as usize..g.end as usize]
    }

    fn is_and(&self, n: Node) -> bool {
        self.gates[n.idx()].and
    }

    fn is_move(&self, n: Node) -> bool {
        self.is_move[n.idx()]
    }

    /// Whether `n` is an input node (an OR over nothing).
    fn is_input(&self, n: Node) -> bool {
        let g = self.gates[n.idx()];
        g.start == g.end && !g.and
    }

    fn push(&mut self, and: bool, lits: &[Lit], is_move: bool) -> Node {
        let start = self.lits.len() as u32;
        self.lits.extend_from_slice(lits);
        self.gates.push(Gate {
            and,
            start,
            end: self.lits.len() as u32,
        });
        self.is_move.push(is_move);
        Node::at(self.gates.len() - 1)
    }

    /// Makes `n` a gate of kind `and` over `lits`.
    fn set(&mut self, n: Node, and: bool, lits: &[Lit]) {
        let start = self.lits.len() as u32;
        self.lits.extend_from_slice(lits);
        self.gates[n.idx()] = Gate {
            and,
            start,
            end: self.lits.len() as u32,
        };
    }

    /// The finished gates, their literals compacted in node order.
    fn into_gates(self) -> Gates {
        let and = self.gates.iter().map(|g| g.and).collect();
        let inputs = Rows::from_rows(
            self.gates
                .iter()
                .map(|g| &self.lits[g.start as usize..g.end as usize]),
        );
        Gates::new(and, inputs)
    }
}

/// Nodes `[start, end)` built together, in topological order of the blocks;
/// a recursive block is one loop.
#[derive(Clone, Copy, Debug)]
struct Block {
    start: Node,
    end: Node,
    recursive: bool,
}

impl Block {
    fn nodes(self) -> impl Iterator<Item = Node> {
        (self.start.0..self.end.0).map(Node)
    }
}

/// Builds the network from the ground program.
struct Builder {
    game: Game,
    gp: GroundProgram,
    max_nodes: usize,
    /// Per role: its term, when the ground program has it.
    roles: Vec<Option<TermId>>,
    /// Per atom: its constant value, once known to be constant.
    konst: Vec<Option<bool>>,
    /// Per atom: its node, once it has one.
    node_of: Vec<Option<Node>>,
    gates: GateTable,
    /// Node blocks in topological order.
    blocks: Vec<Block>,
    terms: Terms,
    /// Gates by kind and sorted inputs, to share equal gates.
    dedup: HashMap<(bool, Vec<Lit>), Node>,
    /// Per role: its `does` input nodes, sorted; and each such node's role.
    role_does: Vec<Vec<Node>>,
    does_role: HashMap<Node, usize>,
}

impl Builder {
    fn new(game: Game, gp: GroundProgram, max_nodes: usize) -> Result<Self, PropnetError> {
        let n = gp.atoms.len();
        let roles: Vec<Option<TermId>> = game.roles.iter().map(|r| gp.pool.find_term(r)).collect();
        let mut b = Builder {
            game,
            gp,
            max_nodes,
            konst: vec![None; n],
            node_of: vec![None; n],
            gates: GateTable::default(),
            blocks: Vec::new(),
            terms: Terms {
                fluents: Vec::new(),
                fluent_of: HashMap::new(),
                moves: Vec::new(),
                move_of: HashMap::new(),
            },
            dedup: HashMap::new(),
            role_does: vec![Vec::new(); roles.len()],
            does_role: HashMap::new(),
            roles,
        };
        b.push_inputs();
        b.build_gates()?;
        Ok(b)
    }

    /// Constant nodes, then fluent inputs, then move inputs.
    fn push_inputs(&mut self) {
        self.gates.push(false, &[], false);
        self.gates.push(false, &[], false);
        let mut does = Vec::new();
        for a in 0..self.gp.atoms.len() {
            let t = self.gp.atoms[a];
            if self.gp.pool.is_const(t) {
                continue;
            }
            let (f, args) = (self.gp.pool.functor(t), self.gp.pool.args(t));
            if f == kw::TRUE && args.len() == 1 {
                let fluent = args[0];
                let i = self.terms.fluents.len() as u32;
                self.terms.fluents.push(fluent);
                self.terms.fluent_of.insert(fluent, i);
                self.node_of[a] = Some(self.gates.push(false, &[], false));
            } else if f == kw::DOES && args.len() == 2 {
                does.push(a);
            }
        }
        for a in does {
            let args = self.gp.pool.args(self.gp.atoms[a]).to_vec();
            if let Some(r) = self.role_of(args[0]) {
                self.move_id(args[1]);
                let node = self.gates.push(false, &[], true);
                self.node_of[a] = Some(node);
                self.role_does[r].push(node);
                self.does_role.insert(node, r);
            } else {
                self.konst[a] = Some(false);
            }
        }
    }

    /// The index of role term `t`.
    fn role_of(&self, t: TermId) -> Option<usize> {
        self.roles.iter().position(|&r| r == Some(t))
    }

    fn move_id(&mut self, t: TermId) -> u32 {
        let n = self.terms.moves.len() as u32;
        *self.terms.move_of.entry(t).or_insert_with(|| {
            self.terms.moves.push(t);
            n
        })
    }

    fn atom_text(&self, a: AtomId) -> String {
        crate::gdl::print::term_to_string(
            &self.gp.pool.to_term(self.gp.atoms[a as usize]),
            &self.game.symbols,
        )
    }

    /// The node for atom `a`: its own, or a constant node.
    fn out_node(&self, a: AtomId) -> Node {
        match self.konst[a as usize] {
            Some(true) => Node::TRUE,
            Some(false) => Node::FALSE,
            None => self.node_of[a as usize].unwrap_or(Node::FALSE),
        }
    }

    /// The steps after the gates: outputs, guards, programs, specialisation,
    /// propagation tables.
    fn finish(mut self) -> Result<Propnet, PropnetError> {
        let found = self.find_outputs()?;
        let (guard_of, factor) = self.plan_guards(&found.legal, &found.next, found.terminal);
        let (legal, rest_of) = self.guard_legal(&found.legal, &guard_of)?;
        self.factor_readers(&factor, &guard_of, &rest_of)?;
        // What each output needs, backwards through the gates.
        let roots: Vec<Node> = legal
            .entries
            .iter()
            .map(|&(n, _)| n)
            .chain(legal.guards.iter().map(|g| g.node()))
            .chain(found.next.iter().copied())
            .chain([found.terminal])
            .collect();
        let goal_nodes: Vec<Node> = found.goals.iter().flatten().map(|&(n, _)| n).collect();
        let mut progs = self.programs(&roots, &goal_nodes, !factor.is_empty());
        let does = self.does_table();
        // Incremental mode when no loop feeds the per-state outputs; then every
        // node of the state and move programs is kept up to date by propagation.
        let incremental = progs.loop_free();
        let next = self.next_table(&mut progs, &does, &found.next, incremental)?;
        let stats = self.stats(&progs);
        let gates = self.gates.into_gates();
        let prop = Propagation::new(&gates, &progs, &legal, &next, incremental);
        let out = Outputs {
            does,
            terminal: found.terminal,
            goals: found.goals,
            legal,
            next,
        };
        let sure_wins = super::wins::sure_wins(&gates, &out, self.terms.fluents.len());
        Ok(Propnet {
            game: self.game,
            pool: self.gp.pool,
            terms: self.terms,
            gates,
            progs,
            incremental,
            prop,
            out,
            sure_wins,
            init: PropnetState::pack(&found.init),
            scratch: Arc::new(Mutex::new(Vec::new())),
            id: super::next_id(),
            stats,
        })
    }

    /// The programs: per block, its nodes go to the state, move or goal
    /// program by what they feed and whether they read `does`. When readers
    /// were `factored`, a rewritten gate reads newer nodes, so the per-state
    /// and per-move nodes are ordered anew from `roots`.
    fn programs(&self, roots: &[Node], goal_nodes: &[Node], factored: bool) -> Programs {
        let n = self.gates.len();
        let mut core = vec![false; n];
        self.mark(&mut core, &mut roots.to_vec());
        let mut for_goals = vec![false; n];
        self.mark(&mut for_goals, &mut goal_nodes.to_vec());
        let mut progs = Programs::default();
        for &b in &self.blocks {
            let items: Vec<(Node, Item)> = if b.recursive {
                vec![(b.start, Item::Loop(b.start, b.end))]
            } else {
                b.nodes().map(|n| (n, Item::Node(n))).collect()
            };
            for (n, item) in items {
                let (c, g) = if b.recursive {
                    (
                        b.nodes().any(|x| core[x.idx()]),
                        b.nodes().any(|x| for_goals[x.idx()]),
                    )
                } else {
                    (core[n.idx()], for_goals[n.idx()])
                };
                if c && factored {
                    // Ordered below.
                } else if self.gates.is_move(n) {
                    if c {
                        progs.moves.push(item);
                    }
                } else if c {
                    progs.state.push(item);
                } else if g {
                    progs.goal.push(item);
                }
            }
        }
        if factored {
            for x in self.postorder(roots) {
                if self.gates.is_input(x) {
                    continue;
                }
                if self.gates.is_move(x) {
                    progs.moves.push(Item::Node(x));
                } else {
                    progs.state.push(Item::Node(x));
                }
            }
        }
        progs
    }

    /// The `next` nodes of the general move program, and in incremental mode
    /// of its copies specialised to each role's pass move (appended to the
    /// move program).
    fn next_table(
        &mut self,
        progs: &mut Programs,
        does: &[Node],
        next: &[Node],
        incremental: bool,
    ) -> Result<NextTable, PropnetError> {
        let mut nodes = next.to_vec();
        let mut pass = vec![(NextTable::NO_MOVE, 0); self.roles.len()];
        if incremental {
            for (r, m, copy) in self.specialize(&mut progs.moves, does, next)? {
                pass[r] = (m, (nodes.len() / next.len().max(1)) as u32);
                nodes.extend(copy);
            }
        }
        let copies = nodes.len().checked_div(next.len()).unwrap_or(1);
        let tracked = if copies > 1 { 1..copies } else { 0..1 };
        Ok(NextTable {
            nodes,
            fluents: next.len(),
            copies,
            tracked,
            pass,
        })
    }

    /// The network's size and the programs' lengths.
    fn stats(&self, progs: &Programs) -> NetStats {
        NetStats {
            ground_atoms: self.gp.atoms.len(),
            join_steps: self.gp.join_steps,
            ground_rules: self.gp.rules.len(),
            fluents: self.terms.fluents.len(),
            moves: self.terms.moves.len(),
            nodes: self.gates.len(),
            // Every literal written, a rewritten gate's old ones too.
            edges: self.gates.lits.len(),
            state_nodes: Programs::count(&progs.state),
            move_nodes: Programs::count(&progs.moves),
            goal_nodes: Programs::count(&progs.goal),
            ground_s: 0.0,
            compile_s: 0.0,
        }
    }

    /// The nodes `roots` need, each after its inputs (no recursive component
    /// may be among them).
    fn postorder(&self, roots: &[Node]) -> Vec<Node> {
        let mut state = vec![0u8; self.gates.len()];
        let mut order = Vec::new();
        let mut stack: Vec<(Node, bool)> = roots.iter().map(|&r| (r, false)).collect();
        while let Some((x, expanded)) = stack.pop() {
            if expanded {
                state[x.idx()] = 2;
                order.push(x);
                continue;
            }
            if state[x.idx()] != 0 {
                continue;
            }
            state[x.idx()] = 1;
            stack.push((x, true));
            for &l in self.gates.inputs(x) {
                if state[l.node().idx()] == 0 {
                    stack.push((l.node(), false));
                }
            }
        }
        order
    }

    /// Marks in `seen` the nodes of `stack` and every node they read.
    fn mark(&self, seen: &mut [bool], stack: &mut Vec<Node>) {
        while let Some(n) = stack.pop() {
            if seen[n.idx()] {
                continue;
            }
            seen[n.idx()] = true;
            for &l in self.gates.inputs(n) {
                stack.push(l.node());
            }
        }
    }
}
