//! A* over the rule engine with the pattern databases of [`super::pattern`]:
//! the breadth-first search's sequel where the databases bound the moves
//! left (sliding puzzles, where breadth-first search drowns in the boards
//! within 20 moves). The databases are built on a thread of their own while
//! the blind search goes on ([`Bfs::start_heuristic`]); the search switches
//! when they are ready and worth it ([`Bfs::poll_heuristic`]).
//!
//! The databases are admissible and consistent (each is a distance in an
//! abstract space every concrete move projects into; their sum where the
//! patterns count disjoint moves), so a state is expanded at its fewest
//! moves from the start and states are taken in buckets of `f = g + h`.
//! When bucket `f` is empty, every plan of `f` moves or fewer would have had
//! a state in it: none exists, which raises the shared lower bound as the
//! blind search's layers do. A winning state found in bucket `f` at `f`
//! moves or fewer is therefore a shortest plan; one found at `f + 1` is
//! kept until bucket `f` is empty. States whose estimate passes the last
//! move allowed, or from which a database finds goal 100 out of reach, are
//! not searched, so an empty open list proves no plan to goal 100 but no
//! best goal below it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::reasoner::StateMachine;

use super::super::context::LEAD;
use super::breadth::{Bfs, Build, End, Node};
use super::pattern::{self, Heuristic};

/// A state the databases (or the last move allowed) rule out: never expanded.
const DEAD: u32 = u32::MAX;
/// A terminal state: never expanded.
const ENDED: u32 = u32::MAX - 1;

impl<M: StateMachine + 'static> Bfs<'_, M> {
    /// Starts building the pattern databases on a thread of their own, once.
    /// It has the search's priority (a thread inherits its creator's nice
    /// value): in auto, nothing else proves the deeper sliding puzzles.
    pub(super) fn start_heuristic(&mut self) {
        let Some((game, ground)) = self.s.rules.take() else {
            return;
        };
        let machine = self.machine.clone();
        let clocked = self.s.clock_end.is_some();
        // An abstract state takes about what a searched one does: the
        // databases get an eighth of the search's share each.
        let per_database = (self.s.limits.max_states / 8).max(1_000);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (tx, tiers) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("patterns".into())
            .spawn(move || {
                pattern::build(
                    &game,
                    &ground,
                    &*machine,
                    clocked,
                    per_database,
                    &flag,
                    |h| {
                        let _ = tx.send(h);
                    },
                )
            });
        match spawned {
            Ok(handle) => {
                self.build = Some(Build {
                    handle,
                    tiers,
                    stop,
                    started: Instant::now(),
                })
            }
            Err(e) => crate::progress!("[breadth] no pattern databases: {e}"),
        }
    }

    /// When the databases are built and the blind search has proven no plan
    /// of `depth` moves: A* from the start (its end) where they bound the
    /// root's distance above half of that; `None` to go on blind.
    pub(super) fn poll_heuristic(&mut self, depth: usize) -> Option<End> {
        self.take_heuristic(depth, false)
    }

    /// Waits for the databases being built, then as [`Bfs::poll_heuristic`].
    pub(super) fn await_heuristic(&mut self, depth: usize) -> Option<End> {
        self.take_heuristic(depth, true)
    }

    /// [`Bfs::poll_heuristic`], waiting for the first tier with `wait`.
    fn take_heuristic(&mut self, depth: usize, wait: bool) -> Option<End> {
        let h = self.next_tier(wait)?;
        if self.s.stop.load(Ordering::Relaxed) {
            return Some(End::Stopped);
        }
        match self.root_estimate(&h) {
            // Goal 100 is out of reach: the blind search goes on for the
            // best goal below it.
            None => {
                self.claim(self.last_claimable());
                None
            }
            Some(d) if d as usize * 2 <= depth => None,
            Some(d) => Some(self.astar(h, d)),
        }
    }

    /// The next tier of databases the build has handed over, if any (with
    /// `wait`, once there is one, or the build or the solve has ended);
    /// where the build ended with no tier, says why.
    pub(super) fn next_tier(&mut self, wait: bool) -> Option<Heuristic> {
        use std::sync::mpsc::RecvTimeoutError;
        let build = self.build.as_ref()?;
        loop {
            let tier = if wait {
                build
                    .tiers
                    .recv_timeout(std::time::Duration::from_millis(10))
            } else {
                build.tiers.try_recv().map_err(|e| match e {
                    std::sync::mpsc::TryRecvError::Empty => RecvTimeoutError::Timeout,
                    std::sync::mpsc::TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
                })
            };
            match tier {
                Ok(h) => {
                    crate::progress!(
                        "[breadth] {} in {:.2} s",
                        h.description,
                        build.started.elapsed().as_secs_f64()
                    );
                    return Some(h);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if !wait || self.s.stop.load(Ordering::Relaxed) {
                        return None;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        match self.build.take()?.handle.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => crate::progress!("[breadth] no pattern databases: {e}"),
            Err(_) => crate::progress!("[breadth] no pattern databases: their thread panicked"),
        }
        None
    }

    /// The databases' estimate of the initial state, said in a progress line.
    pub(super) fn root_estimate(&self, h: &Heuristic) -> Option<u32> {
        let h0 = h.estimate(self.m, &self.m.initial_state(), &mut Vec::new());
        crate::progress!(
            "[breadth] the initial state's estimate: {}",
            h0.map_or("goal 100 out of reach".to_string(), |d| format!(
                "{d} moves"
            ))
        );
        h0
    }

    /// Stops a build still running and waits for its thread.
    pub(super) fn cancel_build(&mut self) {
        if let Some(b) = self.build.take() {
            b.stop.store(true, Ordering::Relaxed);
            let _ = b.handle.join();
        }
    }

    /// The longest plan searched: `--max-steps`, or the clock's end.
    pub(super) fn last(&self) -> usize {
        let max = self.s.limits.max_steps;
        self.s.clock_end.map_or(max, |e| e.min(max))
    }

    /// The most moves an exhausted search refutes: a board first reached
    /// earlier may end a plan by the clock at its end, unseen (see
    /// [`super::breadth`]).
    pub(super) fn last_claimable(&self) -> usize {
        self.s
            .clock_end
            .map_or(self.last(), |e| self.last().min(e - 1))
    }

    /// A* from the initial state, whose estimate is `h0`; again from the
    /// start when a larger tier of databases comes (at the end of a bucket).
    fn astar(&mut self, heuristic: Heuristic, h0: u32) -> End {
        let last = self.last();
        if h0 as usize > last {
            self.claim(self.last_claimable());
            return End::GaveUp(format!(
                "no plan reaches goal 100 within {last} moves (by the pattern databases)"
            ));
        }
        let clock_end = self.s.clock_end.map_or(u32::MAX, |e| e as u32);
        self.nodes.clear();
        self.table.clear();
        let root = self.m.initial_state();
        let hash = self.hash(&root);
        self.nodes.push(Node {
            state: root,
            parent: u32::MAX,
            mv: None,
            g: 0,
            h: h0,
        });
        self.table.insert_unique(hash, 0, |_| hash);
        if h0 > 0 {
            self.claim(h0 as usize - 1);
        }
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); last + 2];
        buckets[h0 as usize].push(0);
        let mut scratch = Vec::new();
        let mut legal = Vec::new();
        let mut expanded: u64 = 0;
        for f in h0 as usize..=last {
            // A winning state one move past `f`: shortest once bucket `f` is empty.
            let mut pending: Option<u32> = None;
            while let Some(i) = buckets[f].pop() {
                let node = &self.nodes[i as usize];
                if node.h >= ENDED || (node.g + node.h) as usize != f || node.g >= clock_end {
                    continue; // stale: reached again in fewer moves
                }
                let (state, g) = (node.state.clone(), node.g + 1);
                expanded += 1;
                if expanded.is_multiple_of(1024) {
                    if self.s.stop.load(Ordering::Relaxed) {
                        return End::Stopped;
                    }
                    self.step_back_when_behind(f);
                }
                if self.nodes.len() >= self.s.limits.max_states {
                    return self.ida(heuristic, f);
                }
                self.m.legal_moves(&state, 0, &mut legal);
                for mv in legal.drain(..) {
                    let child = self.m.next_state(&state, std::slice::from_ref(&mv));
                    let hash = self.hash(&child);
                    let nodes = &self.nodes;
                    let seen = self.table.find(hash, |&j| nodes[j as usize].state == child);
                    let n = match seen.copied() {
                        Some(j) if self.nodes[j as usize].g <= g => continue,
                        Some(j) => {
                            let node = &mut self.nodes[j as usize];
                            node.g = g;
                            node.parent = i;
                            node.mv = Some(mv);
                            j
                        }
                        None => {
                            let h = if self.m.is_terminal(&child) {
                                ENDED
                            } else {
                                heuristic
                                    .estimate(self.m, &child, &mut scratch)
                                    .unwrap_or(DEAD)
                            };
                            let n = self.nodes.len() as u32;
                            self.nodes.push(Node {
                                state: child,
                                parent: i,
                                mv: Some(mv),
                                g,
                                h,
                            });
                            let (nodes, hasher) = (&self.nodes, &self.hasher);
                            self.table.insert_unique(hash, n, |&j| {
                                use std::hash::BuildHasher;
                                hasher.hash_one(&nodes[j as usize].state)
                            });
                            n
                        }
                    };
                    let node = &self.nodes[n as usize];
                    let (h, child) = (node.h, &node.state);
                    if (h == ENDED || g == clock_end) && self.goal(child) == 100 {
                        if g as usize <= f {
                            return End::Won(self.plan(n));
                        }
                        pending = pending.or(Some(n));
                    }
                    if h < ENDED && (g + h) as usize <= last {
                        buckets[(g + h) as usize].push(n);
                    }
                }
            }
            if let Some(n) = pending {
                return End::Won(self.plan(n));
            }
            if f < clock_end as usize {
                self.claim(f);
            }
            crate::progress!(
                "[breadth] A*: no plan of {f} moves: {} states, {expanded} expanded, {:.2} s",
                self.nodes.len(),
                self.s.start.elapsed().as_secs_f64()
            );
            if buckets[f + 1..].iter().all(Vec::is_empty) {
                break;
            }
            if let Some(better) = self.next_tier(false) {
                // Every plan of `f` moves or fewer is refuted already.
                return match self.root_estimate(&better) {
                    None => {
                        self.claim(self.last_claimable());
                        End::GaveUp("the pattern databases find goal 100 out of reach".into())
                    }
                    Some(d) => self.astar(better, d),
                };
            }
        }
        self.claim(self.last_claimable());
        End::GaveUp(format!(
            "no plan reaches goal 100 within {last} moves (A*: every state the pattern \
             databases leave searched)"
        ))
    }

    /// Records that no plan of `moves` moves or fewer exists; where that
    /// carries the shared bound [`LEAD`] moves or more past where it was,
    /// this search takes the lead ([`SolveContext::lead`](super::super::SolveContext::lead)).
    pub(super) fn claim(&self, moves: usize) {
        let before = self.s.refuted.fetch_max(moves, Ordering::Relaxed);
        if self.s.limits.may_lead
            && moves >= before + LEAD
            && !self.s.lead.swap(true, Ordering::Relaxed)
        {
            crate::progress!(
                "[breadth] the bound goes from {before} to {moves} moves: this search leads, \
                 the other workers step back"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::sync::mpsc;
    use std::time::Instant;

    use super::super::breadth::{self, Limits};
    use crate::asp::solve::{Event, Verdict};
    use crate::asp::{self, Mode, SolveContext, SolveOptions};

    /// The breadth-first search alone on our puzzle `name`, allowed to lead,
    /// in 256 MiB (about half a million states): the plan's length and
    /// whether it took the lead.
    fn breadth_on(name: &str) -> (usize, bool) {
        let path = format!("{}/puzzles/{name}.kif", env!("CARGO_MANIFEST_DIR"));
        let game = crate::gdl::load(std::path::Path::new(&path)).expect("loads");
        let opts = SolveOptions {
            mode: Mode::Breadth,
            ..SolveOptions::default()
        };
        let (context, ground) =
            SolveContext::new(asp::prepare(&game), &opts, Instant::now()).expect("prepared");
        let mut limits = Limits::new(200, Some(256));
        limits.may_lead = true;
        let (tx, rx) = mpsc::channel();
        breadth::run(&context, ground, limits, tx);
        let plan = rx.try_iter().find_map(|e| match e {
            Event::Done(_, Verdict::Plan(found), _) => Some(found.plan.len()),
            _ => None,
        });
        (
            plan.expect("a plan proven"),
            context.lead.load(Ordering::Relaxed),
        )
    }

    /// fifteen42: the blind search fills its share within 18 moves, the
    /// databases bound the start at 30, so A* carries the bound 11 moves
    /// past the blind search's own at once and leads. On the 8-puzzle the
    /// blind search proves the plan before any database is built: no lead.
    #[test]
    fn a_star_leads_where_its_databases_jump_the_bound() {
        assert_eq!(breadth_on("fifteen42"), (42, true));
        assert!(!breadth_on("8puzzle").1);
    }
}
