//! The beam phase of the forward search: one pass from the initial state that
//! keeps, at every step, the states nearest to goal 100 by the goal distances
//! ([`super::distance`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::distance::Distances;
use crate::reasoner::StateMachine;

/// States the beam phase keeps at each step, and the CPU time of its thread it
/// may take before the depth-first search starts (CPU time, so that a busy
/// machine leaves the beam where an idle one does, only later).
const BEAM_WIDTH: usize = 600;
const BEAM_TIME: Duration = Duration::from_secs(15);

pub(super) enum Beam<Move> {
    Won(Vec<Move>),
    Stopped,
    /// No goal 100; the best goal below it that a kept line ended with, and
    /// that line.
    Failed(Option<(u8, Vec<Move>)>),
    /// The same, when the CPU time ran out first.
    OutOfTime(Option<(u8, Vec<Move>)>),
}

/// The beam phase: one pass from the root, keeping at each step the
/// [`BEAM_WIDTH`] children with the lowest goal-distance estimate (then the
/// highest goal, then, with `mobility`, the most legal moves, then the order
/// found). Why: where goal 100 needs many pieces
/// brought home by long interleaved lines (solitaireChineseCheckers: 18
/// stones of six colours in 47 moves), a depth-first search commits to its
/// first moves and never returns to them, while a beam ranked by the
/// distances moves every piece along at once, where the depth-first search
/// stays far from goal 100. It proves nothing: when it fails, the depth-first
/// search starts, with the best goal below 100 the beam's lines ended with.
/// A second pass breaks the estimate's ties by the most legal moves: where
/// the estimate does not tell the children apart (a peg board, where every
/// jump takes one peg off), it keeps the boards with the most moves left,
/// and the lines that last longest end with the fewest pegs (pegEuro: two
/// pegs, where the depth-first search had ended no line below three in 4
/// million states; peg: one, in the centre). The first pass keeps the
/// order found, which reaches goal 100 on solitaireChineseCheckers in 51
/// moves (54 with the tie-break).
pub(super) fn beam<M: StateMachine>(
    m: &M,
    d: &Distances,
    root: &M::State,
    max_steps: usize,
    stop: &AtomicBool,
    mobility: bool,
) -> Beam<M::Move> {
    let started = Instant::now();
    let work = crate::cputime::ThreadWatch::start();
    let hasher = hashbrown::DefaultHashBuilder::default();
    let mut seen: hashbrown::HashSet<u64> = hashbrown::HashSet::new();
    // The kept states' moves, as a tree: (parent, move).
    let mut tree: Vec<(usize, M::Move)> = Vec::new();
    let plan = |tree: &[(usize, M::Move)], mut at: usize, last: &M::Move| {
        let mut moves = vec![last.clone()];
        while at != usize::MAX {
            moves.push(tree[at].1.clone());
            at = tree[at].0;
        }
        moves.reverse();
        moves
    };
    let mut layer: Vec<(M::State, usize)> = vec![(root.clone(), usize::MAX)];
    let mut legal = Vec::new();
    let mut after = Vec::new();
    let mut best: Option<(u8, Vec<M::Move>)> = None;
    for depth in 0..max_steps {
        let mut children = Vec::new();
        for (s, node) in &layer {
            m.legal_moves(s, 0, &mut legal);
            for mv in &legal {
                if stop.load(Ordering::Relaxed) {
                    return Beam::Stopped;
                }
                if work.elapsed() > BEAM_TIME {
                    crate::progress!("[search] beam: out of time at step {depth}");
                    return Beam::OutOfTime(best);
                }
                let c = m.next_state(s, std::slice::from_ref(mv));
                if !seen.insert(std::hash::BuildHasher::hash_one(&hasher, &c)) {
                    continue;
                }
                if m.is_terminal(&c) {
                    if m.goal(&c, 0) == Some(100) {
                        crate::progress!(
                            "[search] beam{}: goal 100 at step {}, {:.2} s",
                            if mobility { " (most moves first)" } else { "" },
                            depth + 1,
                            started.elapsed().as_secs_f64()
                        );
                        return Beam::Won(plan(&tree, *node, mv));
                    }
                    let g = m.goal(&c, 0).unwrap_or(0);
                    if g > best.as_ref().map_or(0, |b| b.0) {
                        best = Some((g, plan(&tree, *node, mv)));
                    }
                    continue;
                }
                let moves = if mobility {
                    m.legal_moves(&c, 0, &mut after);
                    after.len()
                } else {
                    0
                };
                let key = (
                    d.estimate(&m.fluents(&c)),
                    std::cmp::Reverse(m.goal(&c, 0).unwrap_or(0)),
                    std::cmp::Reverse(moves),
                    children.len(),
                );
                children.push((key, c, *node, mv.clone()));
            }
        }
        if children.is_empty() {
            break;
        }
        children.sort_unstable_by_key(|c| c.0);
        children.truncate(BEAM_WIDTH);
        layer = children
            .into_iter()
            .map(|(_, c, parent, mv)| {
                tree.push((parent, mv));
                (c, tree.len() - 1)
            })
            .collect();
    }
    crate::progress!(
        "[search] beam{}: no goal 100{}, {:.2} s",
        if mobility { " (most moves first)" } else { "" },
        best.as_ref().map_or(String::new(), |b| format!(
            "; best goal {} in {} moves",
            b.0,
            b.1.len()
        )),
        started.elapsed().as_secs_f64()
    );
    Beam::Failed(best)
}
