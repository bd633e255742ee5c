//! IDA* (Korf 1985): A*'s sequel when its states fill the search's memory
//! share. A* keeps every state it generates; on a deep sliding puzzle the
//! last buckets before the optimum hold millions of them (Korf's first
//! fifteen-puzzle, 57 moves: over 8 million states by bucket 57). IDA*
//! keeps only its path: a depth-first search that cuts every line whose
//! `f = g + h` passes a threshold, run again with the threshold raised to
//! the smallest `f` it cut, from where A* stopped.
//!
//! A pass at threshold `t` that finds no winning state proves that no plan
//! has fewer moves than the next threshold: every line with `f` below it
//! was searched (a pass at any threshold in between would search the same
//! lines). So the first plan a pass finds is a shortest one, as A*'s is.
//! A table of the states reached in the pass, at their fewest moves (up to
//! half the search's share of states), cuts the transpositions that would
//! otherwise make each pass re-search whole subtrees: a state reached again
//! with no fewer moves has nothing new below it in this pass.

use std::sync::atomic::Ordering;

use hashbrown::HashMap;

use crate::gdl::Term;
use crate::reasoner::StateMachine;

use super::breadth::{Bfs, End};
use super::pattern::Heuristic;

/// A state on the path of a pass, with its moves and the next to try.
struct Frame<S, M> {
    state: S,
    g: u32,
    moves: Vec<M>,
    next: usize,
}

/// How a pass ended.
enum Pass {
    Won(Vec<Term>),
    /// No winning state within the threshold; the smallest `f` cut
    /// (`u32::MAX` when nothing was cut: every line searched).
    Exceeded(u32),
    Stopped,
}

impl<M: StateMachine + 'static> Bfs<'_, M> {
    /// IDA* from the initial state, every plan of fewer than `from` moves
    /// already refuted (by A*'s buckets).
    pub(super) fn ida(&mut self, heuristic: &Heuristic, from: usize) -> End {
        let kept = self.nodes.len();
        // A*'s states go back: the passes keep their path and a table.
        self.nodes = Vec::new();
        self.table = hashbrown::HashTable::new();
        let last = self.last();
        let root = self.m.initial_state();
        let Some(h0) = heuristic.estimate(self.m, &root, &mut Vec::new()) else {
            return End::GaveUp("the pattern databases find goal 100 out of reach".into());
        };
        crate::progress!(
            "[breadth] A* holds {kept} states, its share: IDA* from {from} moves on, \
             {:.2} s",
            self.s.start.elapsed().as_secs_f64()
        );
        let mut threshold = (from as u32).max(h0);
        let mut generated: u64 = 0;
        loop {
            if threshold as usize > last {
                self.claim(self.last_claimable());
                return End::GaveUp(format!(
                    "no plan reaches goal 100 within {last} moves (IDA* on the pattern databases)"
                ));
            }
            match self.pass(heuristic, &root, threshold, &mut generated) {
                Pass::Won(plan) => return End::Won(plan),
                Pass::Stopped => return End::Stopped,
                Pass::Exceeded(next) => {
                    self.claim((next as usize - 1).min(self.last_claimable()));
                    crate::progress!(
                        "[breadth] IDA*: no plan of {} moves: {generated} states generated, {:.2} s",
                        next.min(last as u32 + 1) - 1,
                        self.s.start.elapsed().as_secs_f64()
                    );
                    if next == u32::MAX {
                        return End::GaveUp(
                            "no plan reaches goal 100 (IDA*: every state the pattern \
                             databases leave searched)"
                                .into(),
                        );
                    }
                    threshold = next;
                }
            }
        }
    }

    /// One depth-first pass from `root`, cutting lines past `threshold`.
    fn pass(
        &mut self,
        heuristic: &Heuristic,
        root: &M::State,
        threshold: u32,
        generated: &mut u64,
    ) -> Pass {
        let clock_end = self.s.clock_end.map_or(u32::MAX, |e| e as u32);
        let cap = (self.s.limits.max_states / 2).max(1_000);
        let mut seen: HashMap<M::State, u32> = HashMap::new();
        seen.insert(root.clone(), 0);
        let mut scratch = Vec::new();
        let mut moves = Vec::new();
        self.m.legal_moves(root, 0, &mut moves);
        let mut stack = vec![Frame {
            state: root.clone(),
            g: 0,
            moves: std::mem::take(&mut moves),
            next: 0,
        }];
        // The moves from the root to the top of the stack.
        let mut path: Vec<M::Move> = Vec::new();
        let mut cut = u32::MAX;
        while let Some(top) = stack.last_mut() {
            if top.next == top.moves.len() {
                stack.pop();
                path.pop();
                continue;
            }
            let mv = top.moves[top.next].clone();
            top.next += 1;
            let g = top.g + 1;
            let child = self.m.next_state(&top.state, std::slice::from_ref(&mv));
            *generated += 1;
            if generated.is_multiple_of(4096) {
                if self.s.stop.load(Ordering::Relaxed) {
                    return Pass::Stopped;
                }
                self.step_back_when_behind(threshold as usize);
            }
            if self.m.is_terminal(&child) || g >= clock_end {
                if self.goal(&child) == 100 {
                    if g <= threshold {
                        path.push(mv);
                        return Pass::Won(path.iter().map(|m| self.m.move_term(m)).collect());
                    }
                    cut = cut.min(g);
                }
                continue;
            }
            let Some(h) = heuristic.estimate(self.m, &child, &mut scratch) else {
                continue;
            };
            if g + h > threshold {
                cut = cut.min(g + h);
                continue;
            }
            let full = seen.len() >= cap;
            match seen.get_mut(&child) {
                Some(at) if *at <= g => continue,
                Some(at) => *at = g,
                None if !full => {
                    seen.insert(child.clone(), g);
                }
                None => {}
            }
            self.m.legal_moves(&child, 0, &mut moves);
            path.push(mv);
            stack.push(Frame {
                state: child,
                g,
                moves: std::mem::take(&mut moves),
                next: 0,
            });
        }
        Pass::Exceeded(cut)
    }
}
