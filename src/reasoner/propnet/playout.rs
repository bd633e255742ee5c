//! Steps over a scratch: taking one from the pool, loading a state, applying
//! a joint move, reading the goals, and the random playout that chains them
//! without allocating.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Weak};

use rand::Rng;

use super::lit::Node;
use super::scratch::Scratch;
use super::{Propnet, PropnetState};
use crate::reasoner::{Chooser, Pacer, Playout, PlayoutLimits, Steering};

/// Networks whose scratch a thread keeps at once (a player runs one match's
/// network per thread; tests and benchmarks a few).
const LOCAL_NETWORKS: usize = 4;

/// A thread's scratch for one network. Dropped (evicted, or when the thread
/// ends) it goes back to the network's pool, unless the network is gone.
struct Local {
    id: u64,
    // Boxed scratches, see `Propnet::scratch`.
    #[allow(clippy::vec_box)]
    pool: Weak<Mutex<Vec<Box<Scratch>>>>,
    scratch: Option<Box<Scratch>>,
}

impl Drop for Local {
    fn drop(&mut self) {
        if let (Some(s), Some(pool)) = (self.scratch.take(), self.pool.upgrade()) {
            pool.lock().unwrap_or_else(|e| e.into_inner()).push(s);
        }
    }
}

thread_local! {
    static LOCAL: RefCell<Vec<Local>> = const { RefCell::new(Vec::new()) };
}

impl Propnet {
    /// A scratch holding the state with no fluent true.
    fn new_scratch(&self) -> Box<Scratch> {
        let mut s = Box::new(Scratch::new(
            self.gates.len(),
            self.words(),
            self.out.legal.groups(),
        ));
        if self.incremental {
            self.prime(&mut s);
        }
        s
    }

    /// Runs `f` on this thread's scratch for the network: the one it used
    /// last, still loaded with the state it left (a search asks about the
    /// same state several times in a row), else one from the pool or a new
    /// one. A thread keeps its scratch between calls, so threads never hand
    /// scratches to each other and take no lock after the first call: a
    /// shared pool taken from on every call made the threads queue on its
    /// lock and reload each other's states.
    pub(super) fn with_scratch<T>(&self, f: impl FnOnce(&mut Scratch) -> T) -> T {
        let id = self.id;
        let mine = LOCAL
            .try_with(|l| {
                let mut l = l.borrow_mut();
                l.iter_mut()
                    .find(|x| x.id == id)
                    .and_then(|x| x.scratch.take())
            })
            .ok()
            .flatten();
        let mut s = mine.unwrap_or_else(|| {
            let taken = self.scratch.lock().unwrap_or_else(|e| e.into_inner()).pop();
            taken.unwrap_or_else(|| self.new_scratch())
        });
        let out = f(&mut s);
        let kept = LOCAL.try_with(|l| {
            let mut l = l.borrow_mut();
            match l.iter().position(|x| x.id == id) {
                Some(i) if l[i].scratch.is_none() => {
                    l[i].scratch = Some(s);
                    None
                }
                // A nested call holds the slot's scratch already.
                Some(_) => Some(s),
                None => {
                    if l.len() >= LOCAL_NETWORKS {
                        // The oldest goes back to its network's pool.
                        l.remove(0);
                    }
                    l.push(Local {
                        id,
                        pool: Arc::downgrade(&self.scratch),
                        scratch: Some(s),
                    });
                    None
                }
            }
        });
        // (An error: the thread is ending and its cache is gone; the scratch
        // goes with it.)
        if let Ok(Some(s)) = kept {
            self.scratch
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(s);
        }
        out
    }

    /// Makes the scratch hold `state`.
    pub(super) fn load(&self, s: &mut Scratch, state: &PropnetState) {
        if s.loaded && s.cur[..] == state.0[..] {
            return;
        }
        s.goals_done = false;
        for w in 0..s.cur.len() {
            let mut diff = s.cur[w] ^ state.0[w];
            while diff != 0 {
                let bit = diff.trailing_zeros() as usize;
                diff &= diff - 1;
                let i = w * 64 + bit;
                self.set_input(s, Node::fluent(i), state.get(i) as u8);
            }
            s.cur[w] = state.0[w];
        }
        if !self.incremental {
            self.gates.run(&self.progs.state, &mut s.vals);
            s.loaded = true;
        }
    }

    /// Evaluates the goal program for the loaded state, once.
    pub(super) fn goals_into(&self, s: &mut Scratch) {
        if !s.goals_done {
            self.gates.run(&self.progs.goal, &mut s.vals);
            s.goals_done = true;
        }
    }

    /// Sets the `does` inputs of `joint` to `v`, but those of role `skip`.
    fn set_joint(&self, s: &mut Scratch, joint: &[u32], skip: Option<usize>, v: u8) {
        let nm = self.terms.moves.len();
        for (r, &m) in joint.iter().enumerate() {
            if Some(r) == skip {
                continue;
            }
            let n = self.out.does[r * nm + m as usize];
            if n != Node::FALSE {
                self.set_input(s, n, v);
            }
        }
    }

    /// Applies `joint` to the loaded state: `s.changed` gets the fluents whose
    /// value changes. The scratch still holds the old state afterwards.
    ///
    /// When a role plays its pass move, the `next` nodes specialised to that
    /// are read and the role's `does` input is never set: its many readers in
    /// the general program are not visited.
    pub(super) fn advance(&self, s: &mut Scratch, joint: &[u32]) {
        let next = &self.out.next;
        let pass = (0..joint.len()).find(|&r| next.pass[r].0 == joint[r]);
        self.set_joint(s, joint, pass, 1);
        if !self.incremental {
            self.gates.run(&self.progs.moves, &mut s.vals);
        }
        s.changed.clear();
        let copy = pass.map_or(0, |r| next.pass[r].1 as usize);
        if self.incremental && next.tracked.contains(&copy) {
            let words = self.words();
            for w in 0..words {
                let mut bits = s.diff[copy * words + w];
                while bits != 0 {
                    s.changed.push((w * 64) as u32 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
        } else {
            for (i, &n) in next.copy(copy).iter().enumerate() {
                if s.vals[n.idx()] != s.vals[Node::fluent(i).idx()] {
                    s.changed.push(i as u32);
                }
            }
        }
        self.set_joint(s, joint, pass, 0);
    }

    /// Moves the scratch to the state `advance` computed.
    fn apply_changes(&self, s: &mut Scratch) {
        let changed = std::mem::take(&mut s.changed);
        for &i in &changed {
            let node = Node::fluent(i as usize);
            let v = 1 - s.vals[node.idx()];
            self.set_input(s, node, v);
            s.cur[i as usize / 64] ^= 1 << (i % 64);
        }
        s.changed = changed;
        if !self.incremental {
            self.gates.run(&self.progs.state, &mut s.vals);
        }
        s.goals_done = false;
    }

    /// A sure win of role `r` legal in the loaded state (see `wins.rs`):
    /// the first in list order.
    #[inline]
    fn sure_win(&self, s: &Scratch, r: usize) -> Option<u32> {
        let guards = &self.out.legal.guards;
        self.sure_wins.entries[r]
            .iter()
            .find(|&&(g, n, _)| guards[g as usize].value(&s.vals) && s.vals[n.idx()] == 1)
            .map(|&(_, _, m)| m)
    }

    /// Draws a joint move in the loaded state into `joint`, each role's
    /// sure win first where `sure_wins` asks and it has one: shorter than the
    /// number of roles when some role has no legal move.
    #[inline]
    fn draw_joint<R: Rng>(
        &self,
        s: &mut Scratch,
        rng: &mut R,
        joint: &mut Vec<u32>,
        mut choose: Option<&mut Chooser<'_, u32, R>>,
        sure_wins: bool,
    ) {
        joint.clear();
        let legal = &self.out.legal;
        for r in 0..self.out.goals.len() {
            if sure_wins {
                if let Some(m) = self.sure_win(s, r) {
                    joint.push(m);
                    continue;
                }
            }
            if self.incremental && choose.is_none() {
                // The same move the state machine's `legal_moves` lists at the
                // drawn index.
                let count = legal.legal_count(&s.vals, &s.group_count, r);
                if count == 0 {
                    break;
                }
                let k = rng.gen_range(0..count);
                joint.push(
                    legal
                        .kth_legal(&s.vals, &s.group_count, r, k)
                        .expect("k < count"),
                );
                continue;
            }
            let mut moves = std::mem::take(&mut s.legal);
            legal.legal_into(&s.vals, r, &mut moves);
            s.legal = moves;
            if s.legal.is_empty() {
                break;
            }
            let i = match choose.as_deref_mut() {
                Some(choose) => choose(r, &s.legal, rng),
                None => rng.gen_range(0..s.legal.len()),
            };
            joint.push(s.legal[i]);
        }
    }

    /// A playout from `state` in scratch `s` (see
    /// [`Propnet::playout_recorded`]): random, or steered by `steer`.
    pub(super) fn playout_in<R: Rng>(
        &self,
        s: &mut Scratch,
        state: &PropnetState,
        rng: &mut R,
        limits: PlayoutLimits,
        goals: &mut Vec<Option<u8>>,
        steer: Steering<'_, '_, u32, R>,
    ) -> Playout {
        let Steering {
            mut record,
            mut choose,
        } = steer;
        self.load(s, state);
        if self.incremental && !(s.has_start && s.start.cur == s.cur) {
            s.save_start();
        }
        let roles = self.out.goals.len();
        let mut steps = 0;
        let mut joint = std::mem::take(&mut s.joint);
        let mut cut = false;
        let mut pacer = Pacer::new(limits.deadline);
        let terminal = loop {
            if s.vals[self.out.terminal.idx()] == 1 {
                break true;
            }
            if steps >= limits.max_steps {
                break false;
            }
            // A network whose recursive parts are solved every step may take
            // milliseconds a step: the deadline is checked before each one.
            if pacer.passed() {
                cut = true;
                break false;
            }
            self.draw_joint(s, rng, &mut joint, choose.as_deref_mut(), limits.sure_wins);
            if joint.len() < roles {
                break false;
            }
            if let Some(rec) = record.as_deref_mut() {
                rec.extend_from_slice(&joint);
            }
            self.advance(s, &joint);
            self.apply_changes(s);
            steps += 1;
        };
        s.joint = joint;
        self.goals_into(s);
        goals.clear();
        for r in 0..roles {
            goals.push(self.out.single_goal(r, &s.vals));
        }
        if self.incremental {
            s.restore_start();
        }
        Playout {
            steps,
            terminal,
            cut,
        }
    }
}
