//! The explored part of an abstract state space (the abstractions of
//! `abstraction.rs`): its states, transitions and goal states, and each
//! state's distance to a goal, the numbers a pattern database keeps.

use hashbrown::HashMap;

/// An abstract state: bit `i` is the `i`-th kept fluent.
pub type Key = [u64; 4];

/// The reachable part of an abstract space.
pub struct Space {
    pub keys: Vec<Key>,
    pub index: HashMap<Key, u32>,
    /// Transitions, by state number.
    pub edges: Vec<(u32, u32)>,
    /// Whether each state may be a goal.
    pub goal: Vec<bool>,
}

impl Space {
    /// Each state's distance to a goal state, a transition costing 1 where
    /// `costs` says so (else 0); `u16::MAX` where no goal is reachable.
    pub fn distances(&self, costs: impl Fn(&Key, &Key) -> bool) -> Vec<u16> {
        let n = self.keys.len();
        let mut into: Vec<Vec<(u32, bool)>> = vec![Vec::new(); n];
        for &(a, b) in &self.edges {
            let c = costs(&self.keys[a as usize], &self.keys[b as usize]);
            into[b as usize].push((a, c));
        }
        let mut dist = vec![u16::MAX; n];
        let mut deque = std::collections::VecDeque::new();
        for (i, &g) in self.goal.iter().enumerate() {
            if g {
                dist[i] = 0;
                deque.push_back(i as u32);
            }
        }
        // 0-1 breadth-first search backwards from the goals.
        while let Some(b) = deque.pop_front() {
            let d = dist[b as usize];
            for &(a, c) in &into[b as usize] {
                let nd = d.saturating_add(u16::from(c));
                if nd < dist[a as usize] {
                    dist[a as usize] = nd;
                    if c {
                        deque.push_back(a);
                    } else {
                        deque.push_front(a);
                    }
                }
            }
        }
        dist
    }
}
