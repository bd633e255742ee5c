//! GIFL, game-independent feature learning (Maligne 2010; see
//! `../shared/docs/playing.md`): playout moves chosen by *features*, sets of
//! fluents under which a move is known to win or to stop a win, learned from
//! random walks before the search.
//!
//! Learning (turn-taking games: a step teaches only when one role alone has
//! a choice): at the end of a walk that a role won with its last move, the
//! state before that move and the move give an *offensive* feature (level
//! 1); an opponent's other move one step earlier that takes the winning move
//! away gives a *defensive* one. A state becomes a feature by
//! generalisation: its fluents are taken out one at a time, and one stays
//! only when without it the move is illegal or the test (the move still wins;
//! the win is still gone) fails. Matching a feature is a subset test on the
//! engine's own states ([`StateMachine::includes`]), no terms involved. Up the walk, the winner's earlier moves that
//! lead (after the reply played) to a state where a known offensive feature
//! applies give features one level higher, up to [`MAX_LEVEL`]. A feature of
//! level L is worth `100 * 0.9^(L-1)`. The fluents say what holds, not
//! what is empty, so a feature can match where its move does not win (connect
//! four: the square it would land on is taken); a level-1 feature that a
//! state of the walks refutes so is dropped, with the features leading to it.
//!
//! Playing: in each state, every legal move gets the best value of the
//! features that match it (all their fluents hold), 0 when none; a move
//! worth 100 is taken at once (offensive before defensive), otherwise the
//! move is drawn by a Boltzmann distribution over the values (temperature
//! 0.5 on values scaled to 0..1), for every role: the paper's model of the
//! opponent, following the features half of the time, lost to plain UCT in
//! our decoupled search, whose tree models the opponent already.

use std::time::Instant;

use hashbrown::HashMap;
use rand::rngs::SmallRng;
use rand::Rng;

use super::enhance::gibbs;
use super::policy::PlayoutPolicy;
use crate::gdl::Term;
use crate::reasoner::{RoleIdx, StateMachine};

/// The deepest level features are learned to.
pub const MAX_LEVEL: u8 = 3;
/// The discount per level.
const V: f64 = 0.9;
/// The Boltzmann temperature, on values scaled to 0..1.
pub const TAU: f64 = 0.5;
/// The longest walk; a walk that does not end by then teaches nothing.
const MAX_WALK: usize = 400;
/// States kept to refute features by.
const SEEN: usize = 20_000;
/// Defensive features learned per winning walk at most.
const MAX_DEFENSIVE: usize = 3;

/// A move that wins (offensive) or stops a win (defensive) wherever its
/// fluents hold.
pub struct Feature<M: StateMachine> {
    pub role: RoleIdx,
    pub mv: M::Move,
    /// Sorted.
    pub fluents: Vec<Term>,
    /// The fluents as the engine's state, for matching without terms.
    part: M::State,
    pub level: u8,
    pub offensive: bool,
    /// The feature one level down this one leads to (levels 2 and 3).
    below: Option<usize>,
}

// By hand: a derive would ask `M` itself to be `Clone`.
impl<M: StateMachine> Clone for Feature<M> {
    fn clone(&self) -> Self {
        Feature {
            role: self.role,
            mv: self.mv.clone(),
            fluents: self.fluents.clone(),
            part: self.part.clone(),
            level: self.level,
            offensive: self.offensive,
            below: self.below,
        }
    }
}

impl<M: StateMachine> Feature<M> {
    /// `100 * 0.9^(level - 1)`.
    pub fn value(&self) -> f64 {
        100.0 * V.powi(self.level as i32 - 1)
    }

    /// A feature of `fluents`; `None` when the engine cannot make them a
    /// state.
    fn new(
        m: &M,
        role: RoleIdx,
        mv: M::Move,
        fluents: Vec<Term>,
        level: u8,
        offensive: bool,
    ) -> Option<Self> {
        let part = m.state_from_fluents(&fluents)?;
        Some(Feature {
            role,
            mv,
            fluents,
            part,
            level,
            offensive,
            below: None,
        })
    }

    /// Whether all the feature's fluents hold in `state`.
    pub fn holds(&self, m: &M, state: &M::State) -> bool {
        m.includes(state, &self.part)
    }
}

/// The features learned for a game.
pub struct Features<M: StateMachine> {
    list: Vec<Feature<M>>,
    by_move: HashMap<(RoleIdx, M::Move), Vec<usize>>,
    /// Walks run, and of them those that ended with a win.
    pub walks: usize,
    pub won: usize,
}

impl<M: StateMachine> Default for Features<M> {
    fn default() -> Self {
        Features {
            list: Vec::new(),
            by_move: HashMap::new(),
            walks: 0,
            won: 0,
        }
    }
}

impl<M: StateMachine> Features<M> {
    pub fn list(&self) -> &[Feature<M>] {
        &self.list
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Adds `f` unless the same role, move and fluents are known; its index
    /// either way.
    fn add(&mut self, f: Feature<M>) -> usize {
        let key = (f.role, f.mv.clone());
        let known = self.by_move.get(&key).and_then(|ids| {
            ids.iter().copied().find(|&i| {
                self.list[i].fluents == f.fluents && self.list[i].offensive == f.offensive
            })
        });
        if let Some(i) = known {
            return i;
        }
        let i = self.list.len();
        self.by_move.entry(key).or_default().push(i);
        self.list.push(f);
        i
    }

    /// Drops the offensive features of level 1 that some state in `seen`
    /// refutes (they hold, the move is legal, and it does not win: a
    /// square the fluents do not say is empty is taken) and the features
    /// leading to them.
    fn refute(&mut self, m: &M, seen: &[M::State], late: &dyn Fn() -> bool) {
        let mut dropped = vec![false; self.list.len()];
        let mut legal = Vec::new();
        for (i, f) in self.list.iter().enumerate() {
            if !f.offensive || f.level != 1 || late() {
                continue;
            }
            for s in seen {
                if !f.holds(m, s) {
                    continue;
                }
                m.legal_moves(s, f.role, &mut legal);
                if !legal.contains(&f.mv) {
                    continue;
                }
                let joint: Option<Vec<M::Move>> = (0..m.num_roles())
                    .map(|r| {
                        if r == f.role {
                            Some(f.mv.clone())
                        } else {
                            m.legal(s, r).first().cloned()
                        }
                    })
                    .collect();
                let Some(joint) = joint else { continue };
                let next = m.next_state(s, &joint);
                if !(m.is_terminal(&next) && m.goal(&next, f.role) == Some(100)) {
                    dropped[i] = true;
                    break;
                }
            }
        }
        // A feature leading to a dropped one goes too (the one it leads to
        // is always added first).
        for i in 0..self.list.len() {
            if let Some(b) = self.list[i].below {
                if dropped[b] {
                    dropped[i] = true;
                }
            }
        }
        let kept: Vec<Feature<M>> = std::mem::take(&mut self.list)
            .into_iter()
            .zip(&dropped)
            .filter(|(_, d)| !**d)
            .map(|(f, _)| f)
            .collect();
        self.by_move.clear();
        for f in kept {
            // The indices change: the links have served.
            self.add(Feature { below: None, ..f });
        }
    }

    /// The best value (and whether offensive) of the features of `role`'s
    /// move `mv` that hold in `state`.
    pub fn value(
        &self,
        m: &M,
        role: RoleIdx,
        mv: &M::Move,
        state: &M::State,
    ) -> Option<(f64, bool)> {
        let ids = self.by_move.get(&(role, mv.clone()))?;
        ids.iter()
            .map(|&i| &self.list[i])
            .filter(|f| f.holds(m, state))
            .map(|f| (f.value(), f.offensive))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
    }
}

/// Learns features from `walks` random walks (fewer when `deadline` passes).
pub fn learn<M: StateMachine>(
    m: &M,
    walks: usize,
    deadline: Option<Instant>,
    rng: &mut SmallRng,
) -> Features<M> {
    let mut features = Features::default();
    let late = || deadline.is_some_and(|d| Instant::now() >= d);
    let mut legal = Vec::new();
    // States of the walks (one role on the move), to refute features by.
    let mut seen: Vec<M::State> = Vec::new();
    for _ in 0..walks {
        if late() {
            break;
        }
        features.walks += 1;
        // The walk: states[i] --joints[i]--> states[i + 1].
        let mut states = vec![m.initial_state()];
        let mut joints: Vec<Vec<M::Move>> = Vec::new();
        let mut movers: Vec<Vec<bool>> = Vec::new();
        let mut ended = false;
        while joints.len() < MAX_WALK {
            let s = states.last().expect("a state");
            if m.is_terminal(s) {
                ended = true;
                break;
            }
            let mut joint = Vec::new();
            let mut moved = Vec::new();
            for r in 0..m.num_roles() {
                m.legal_moves(s, r, &mut legal);
                if legal.is_empty() {
                    break;
                }
                moved.push(legal.len() > 1);
                joint.push(legal[rng.gen_range(0..legal.len())].clone());
            }
            if joint.len() < m.num_roles() {
                break;
            }
            states.push(m.next_state(s, &joint));
            joints.push(joint);
            movers.push(moved);
        }
        for (s, moved) in states.iter().zip(&movers) {
            if seen.len() < SEEN && moved.iter().filter(|&&b| b).count() == 1 {
                seen.push(s.clone());
            }
        }
        if !ended || joints.is_empty() {
            continue;
        }
        let end = states.len() - 1;
        // GIFL reads turns: only a win by the one role on the move teaches
        // (with simultaneous moves the win also rests on the others' moves).
        let winners: Vec<RoleIdx> = (0..m.num_roles())
            .filter(|&r| m.goal(&states[end], r) == Some(100) && alone(&movers[end - 1], r))
            .collect();
        if !winners.is_empty() {
            features.won += 1;
        }
        for r in winners {
            learn_from_win(m, &states, &joints, &movers, r, &mut features, &late);
        }
    }
    features.refute(m, &seen, &late);
    features
}

/// The features a walk that `r` won with its last move teaches.
fn learn_from_win<M: StateMachine>(
    m: &M,
    states: &[M::State],
    joints: &[Vec<M::Move>],
    movers: &[Vec<bool>],
    r: RoleIdx,
    features: &mut Features<M>,
    late: &dyn Fn() -> bool,
) {
    let last = joints.len() - 1;
    let wins = |_: &M::State, s: &M::State| m.is_terminal(s) && m.goal(s, r) == Some(100);
    let fluents = generalise(m, &states[last], &[&joints[last]], &wins, late);
    let Some(offensive) = Feature::new(m, r, joints[last][r].clone(), fluents, 1, true) else {
        return;
    };
    let mut below_id = features.add(offensive.clone());
    // Defensive: an opponent's other move one step earlier after which the
    // winning move no longer applies.
    if last >= 1 {
        let t = last - 1;
        let mut found = 0;
        let mut legal = Vec::new();
        for o in (0..m.num_roles()).filter(|&o| o != r && alone(&movers[t], o)) {
            m.legal_moves(&states[t], o, &mut legal);
            for a in legal.clone() {
                if found >= MAX_DEFENSIVE || late() || a == joints[t][o] {
                    continue;
                }
                let mut joint = joints[t].clone();
                joint[o] = a.clone();
                // The win is there after the move played and gone after
                // this one: taking either part of the win's fluents away
                // would not keep the first half.
                let actual = &joints[t];
                let stopped = |start: &M::State, after: &M::State| {
                    !applies(m, &offensive, after)
                        && applies(m, &offensive, &m.next_state(start, actual))
                };
                if !stopped(&states[t], &m.next_state(&states[t], &joint)) {
                    continue;
                }
                let fluents = generalise(m, &states[t], &[&joint], &stopped, late);
                if let Some(f) = Feature::new(m, o, a, fluents, 1, false) {
                    features.add(f);
                    found += 1;
                }
            }
        }
    }
    // Up the walk: r's earlier moves that lead, after the reply played, to a
    // state where the feature one level down applies.
    let mut below = offensive;
    let mut t = last;
    for level in 2..=MAX_LEVEL {
        if t < 2 || late() || !alone(&movers[t - 2], r) {
            break;
        }
        t -= 2;
        let target = below.clone();
        if applies(m, &target, &states[t]) {
            // It held before the move: the move did not create it.
            break;
        }
        let creates = |_: &M::State, s: &M::State| applies(m, &target, s);
        let fluents = generalise(m, &states[t], &[&joints[t], &joints[t + 1]], &creates, late);
        let Some(mut f) = Feature::new(m, r, joints[t][r].clone(), fluents, level, true) else {
            break;
        };
        f.below = Some(below_id);
        below_id = features.add(f.clone());
        below = f;
    }
}

/// Whether `r` is the one role with a choice at a step.
fn alone(movers: &[bool], r: RoleIdx) -> bool {
    movers[r] && movers.iter().filter(|&&m| m).count() == 1
}

/// Whether `f` applies in `s`: its fluents hold and its move is legal.
fn applies<M: StateMachine>(m: &M, f: &Feature<M>, s: &M::State) -> bool {
    f.holds(m, s) && m.legal(s, f.role).contains(&f.mv)
}

/// The fluents of `state` that `joints` (played in turn) need to stay legal
/// and to pass `test` on the state they lead to: each fluent is taken out in
/// turn, and dropped for good when the joint moves stay legal and the test
/// still passes without it. Sorted.
fn generalise<M: StateMachine>(
    m: &M,
    state: &M::State,
    joints: &[&Vec<M::Move>],
    test: &dyn Fn(&M::State, &M::State) -> bool,
    late: &dyn Fn() -> bool,
) -> Vec<Term> {
    let mut keep = m.fluents(state);
    keep.sort();
    let all = keep.clone();
    for f in &all {
        if late() {
            break;
        }
        let trial: Vec<Term> = keep.iter().filter(|g| *g != f).cloned().collect();
        let Some(start) = m.state_from_fluents(&trial) else {
            continue;
        };
        let mut s = start.clone();
        let mut legal_all = true;
        for joint in joints {
            let legal = (0..m.num_roles()).all(|r| m.legal(&s, r).contains(&joint[r]));
            if !legal {
                legal_all = false;
                break;
            }
            s = m.next_state(&s, joint);
        }
        if legal_all && test(&start, &s) {
            keep = trial;
        }
    }
    keep
}

/// Playout moves by the learned features (see the module documentation),
/// for every role alike.
pub struct GiflPolicy<M: StateMachine> {
    pub features: std::sync::Arc<Features<M>>,
    pub tau: f64,
}

impl<M: StateMachine> PlayoutPolicy<M> for GiflPolicy<M> {
    fn choose(
        &self,
        machine: &M,
        state: &M::State,
        role: RoleIdx,
        legal: &[M::Move],
        rng: &mut SmallRng,
    ) -> usize {
        if legal.len() == 1 {
            return 0;
        }
        if self.features.is_empty() {
            return rng.gen_range(0..legal.len());
        }
        let values: Vec<Option<(f64, bool)>> = legal
            .iter()
            .map(|mv| self.features.value(machine, role, mv, state))
            .collect();
        // A move worth 100 at once, offensive first.
        let best = values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.filter(|(x, _)| *x >= 100.0).map(|(_, off)| (off, i)))
            .max();
        if let Some((_, i)) = best {
            return i;
        }
        gibbs(
            values.iter().map(|v| v.map_or(0.0, |x| x.0) / 100.0),
            self.tau,
            rng,
        )
    }
}
