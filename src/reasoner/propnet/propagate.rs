//! Incremental propagation: the tables that say what a changed node updates
//! (its readers' counts, the legal groups it decides, the diff bits of the
//! `next` nodes it is), and setting an input with the change pushed through.

use super::eval::{Gates, Item, Programs};
use super::lit::{Lit, Node};
use super::outputs::{LegalTable, NextTable};
use super::rows::Rows;
use super::scratch::Scratch;
use super::Propnet;

/// Node flags: some gate reads the node; the node decides a legal move.
const HAS_READERS: u8 = 1;
const LEGAL_OUT: u8 = 2;
/// The node is the `next` node of some fluent (in some copy of the move program).
const NEXT_OUT: u8 = 4;

/// What a change of each node updates.
pub(super) struct Propagation {
    /// Per node, the gates that read it: `Lit::new(gate, negated)`, negated
    /// when the gate reads the node negated (empty rows in full mode).
    fanout: Rows<Lit>,
    /// A gate is true when its count of true literals reaches this (all of
    /// them for AND, one for OR).
    threshold: Vec<i32>,
    /// Per node, [`HAS_READERS`], [`LEGAL_OUT`] and [`NEXT_OUT`].
    flags: Vec<u8>,
    /// Per node, the legal groups of the entries it decides (one per entry).
    legal_of: Rows<u32>,
    /// Per node, the (copy, fluent) pairs of the tracked copies whose `next`
    /// node it is.
    next_of: Rows<(u32, u32)>,
}

impl Propagation {
    /// The tables for `gates`; the fan-out only in incremental mode, over the
    /// nodes of the state and move programs.
    pub(super) fn new(
        gates: &Gates,
        progs: &Programs,
        legal: &LegalTable,
        next: &NextTable,
        incremental: bool,
    ) -> Propagation {
        let n = gates.len();
        let mut next_at: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (k, &x) in next.nodes.iter().enumerate() {
            let (c, i) = (k / next.fluents, k % next.fluents);
            // A fluent whose next node is itself never differs.
            if next.tracked.contains(&c) && x != Node::fluent(i) {
                next_at[x.idx()].push((c as u32, i as u32));
            }
        }
        let next_of = Rows::from_rows(&next_at);
        let fanout = if incremental {
            let mut outs: Vec<Vec<Lit>> = vec![Vec::new(); n];
            for item in progs.state.iter().chain(&progs.moves) {
                if let Item::Node(g) = *item {
                    for &l in gates.inputs(g) {
                        outs[l.node().idx()].push(Lit::new(g, l.negated()));
                    }
                }
            }
            Rows::from_rows(&outs)
        } else {
            Rows::empty(n)
        };
        let mut by_node: Vec<Vec<u32>> = vec![Vec::new(); n];
        for g in 0..legal.groups() {
            for &(node, _) in legal.entries.row(g) {
                by_node[node.idx()].push(g as u32);
            }
        }
        let legal_of = Rows::from_rows(&by_node);
        let flags = (0..n)
            .map(|i| {
                let mut f = 0;
                if !legal_of.is_empty_row(i) {
                    f |= LEGAL_OUT;
                }
                if !fanout.is_empty_row(i) {
                    f |= HAS_READERS;
                }
                if !next_of.is_empty_row(i) {
                    f |= NEXT_OUT;
                }
                f
            })
            .collect();
        let threshold = (0..n)
            .map(|g| {
                let g = Node::at(g);
                if gates.is_and(g) {
                    gates.inputs(g).len() as i32
                } else {
                    1
                }
            })
            .collect();
        Propagation {
            fanout,
            threshold,
            flags,
            legal_of,
            next_of,
        }
    }
}

impl Propnet {
    /// Incremental mode: brings a new scratch's values, counts, diff bits and
    /// group counts in line with its (empty) state.
    pub(super) fn prime(&self, s: &mut Scratch) {
        let n = self.gates.len();
        self.gates.run(&self.progs.state, &mut s.vals);
        self.gates.run(&self.progs.moves, &mut s.vals);
        s.counts = vec![0; n];
        for g in 0..n {
            s.counts[g] = self
                .gates
                .inputs(Node::at(g))
                .iter()
                .filter(|&&l| l.value(&s.vals))
                .count() as i32
                - self.prop.threshold[g];
        }
        s.loaded = true;
        s.diff = vec![0; self.out.next.copies * self.words()];
        for c in self.out.next.tracked.clone() {
            for i in 0..self.terms.fluents.len() {
                self.update_diff(s, c, i);
            }
        }
        let legal = &self.out.legal;
        for g in 0..legal.groups() {
            s.group_count[g] = legal
                .entries
                .row(g)
                .iter()
                .map(|&(n, _)| s.vals[n.idx()] as u32)
                .sum();
        }
    }

    /// Recomputes whether fluent `i`'s `next` node in copy `c` disagrees with it.
    #[inline]
    fn update_diff(&self, s: &mut Scratch, c: usize, i: usize) {
        let n = self.out.next.node(c, i).idx();
        let w = c * self.words() + i / 64;
        let differs = (s.vals[n] != s.vals[Node::fluent(i).idx()]) as u64;
        s.diff[w] = s.diff[w] & !(1 << (i % 64)) | differs << (i % 64);
    }

    /// Keeps the diff bits in step with a change of node `n`: as a `next`
    /// node, and as a fluent input.
    #[inline]
    fn track_next(&self, s: &mut Scratch, n: usize) {
        for &(c, i) in self.prop.next_of.row(n) {
            self.update_diff(s, c as usize, i as usize);
        }
    }

    /// Keeps the legal counts in step with a change of node `n` to `v`.
    #[inline]
    fn track_legal(&self, s: &mut Scratch, n: usize, v: u8) {
        for &g in self.prop.legal_of.row(n) {
            if v == 1 {
                s.group_count[g as usize] += 1;
            } else {
                s.group_count[g as usize] -= 1;
            }
        }
    }

    /// Sets input `node` to `v`; in incremental mode, propagates the change.
    /// Each transition of a node is applied once to the counts of its readers, so
    /// the counts are exact once the stack is empty, whatever the order.
    #[inline]
    pub(super) fn set_input(&self, s: &mut Scratch, node: Node, v: u8) {
        if s.vals[node.idx()] == v {
            return;
        }
        s.vals[node.idx()] = v;
        if !self.incremental {
            return;
        }
        let f = self.prop.flags[node.idx()];
        if f & LEGAL_OUT != 0 {
            self.track_legal(s, node.idx(), v);
        }
        if f & NEXT_OUT != 0 {
            self.track_next(s, node.idx());
        }
        if let Some(i) = node.fluent_index(self.out.next.fluents) {
            for c in self.out.next.tracked.clone() {
                self.update_diff(s, c, i);
            }
        }
        s.stack.push((node, v));
        while let Some((n, v)) = s.stack.pop() {
            for &e in self.prop.fanout.row(n.idx()) {
                let g = e.node().idx();
                let c = &mut s.counts[g];
                *c += if v ^ e.negated() as u8 == 1 { 1 } else { -1 };
                let nv = (*c >= 0) as u8;
                if nv != s.vals[g] {
                    s.vals[g] = nv;
                    let f = self.prop.flags[g];
                    if f & LEGAL_OUT != 0 {
                        self.track_legal(s, g, nv);
                    }
                    if f & NEXT_OUT != 0 {
                        self.track_next(s, g);
                    }
                    // Outputs nobody reads need no visit.
                    if f & HAS_READERS != 0 {
                        s.stack.push((e.node(), nv));
                    }
                }
            }
        }
    }
}
